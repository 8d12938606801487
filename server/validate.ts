// Parses untrusted input with a zod schema and turns failures into one readable 400.
import type { z } from 'zod';
import { Invalid } from './errors.ts';

export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const parsed = schema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const msg = parsed.error.issues
    .map((i) => {
      const where = i.path.length ? i.path.join('.') : 'body';
      if (i.code === 'unrecognized_keys') return `${where}: unknown field ${i.keys.map((k) => `'${k}'`).join(', ')}`;
      return `${where}: ${i.message}`;
    })
    .join('; ');
  throw new Invalid(msg);
}
