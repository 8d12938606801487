// The message envelope of the companion-runtime spec: what the control plane and node agents
// send each other (agent commands over the GraphQL subscription, agent signals over a mutation).
// Strict at every level: a key outside the schema is refused, not dropped.
import { z } from 'zod';

export const EnvelopeKind = z.enum(['handoff', 'signal']);
export type EnvelopeKind = z.infer<typeof EnvelopeKind>;

export const EnvelopeArtifact = z.strictObject({
  type: z.string(),
  ref: z.string(),
});
export type EnvelopeArtifact = z.infer<typeof EnvelopeArtifact>;

export const EnvelopeStatus = z.strictObject({
  ok: z.boolean(),
  reason: z.string().optional(),
});
export type EnvelopeStatus = z.infer<typeof EnvelopeStatus>;

/** A plain JSON object; any keys (the spec's `structured`). Arrays and null are not objects here. */
const PlainObject = z.custom<Record<string, unknown>>(
  (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  { message: 'expected an object' },
);

export const EnvelopePayload = z.strictObject({
  message: z.string().optional(),
  structured: PlainObject.optional(),
  artifacts: z.array(EnvelopeArtifact).optional(),
  status: EnvelopeStatus.optional(),
});
export type EnvelopePayload = z.infer<typeof EnvelopePayload>;

export const Envelope = z.strictObject({
  kind: EnvelopeKind,
  /** Node ids are identifiers: the empty string is refused (docs/decisions.md, "Nomad"). */
  fromNodeId: z.string().min(1),
  toNodeId: z.string().min(1),
  payload: EnvelopePayload,
});
export type Envelope = z.infer<typeof Envelope>;

/** The id the control plane uses as `fromNodeId` / `toNodeId` for itself. */
export const CONTROL_PLANE_ID = 'control-plane';
