#!/usr/bin/env node
// The `caravan` command: loads the TypeScript sources through tsx and runs the CLI.
import { register } from 'tsx/esm/api';

register();
await import('../server/cli.ts');
