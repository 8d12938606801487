// Parses untrusted input with a zod schema and turns failures into one readable 400.
import type { z } from 'zod';
import { Invalid } from './errors.ts';

/** `source` names the input in messages about the input as a whole (body or query). */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown, source: 'body' | 'query' = 'body'): z.infer<T> {
  const parsed = schema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const msg = parsed.error.issues
    .map((i) => {
      const where = i.path.length ? i.path.join('.') : source;
      if (i.code === 'unrecognized_keys') return `${where}: unknown field ${i.keys.map((k) => `'${k}'`).join(', ')}`;
      return `${where}: ${i.message}`;
    })
    .join('; ');
  throw new Invalid(msg);
}
