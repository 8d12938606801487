// The committed SDL (schema.graphql) is what the builder makes: a change to the GraphQL types
// without `npm run graphql:sdl` fails here.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { schemaSdl, SDL_FILE } from '../../server/graphql/operator/sdl.ts';

describe('schema.graphql', () => {
  it('matches the schema the server builds (run `npm run graphql:sdl` after changing types)', () => {
    const committed = fs.readFileSync(SDL_FILE, 'utf8');
    expect(committed === schemaSdl(), 'schema.graphql is out of date: run `npm run graphql:sdl` and commit it').toBe(true);
  });
});
