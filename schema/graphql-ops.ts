// The GraphQL operations node agents and launchers send to the control plane. Their inputs
// are JSON validated with the zod schemas of schema/agent.ts on both sides.
export const REPORT_SESSION = 'mutation ReportSession($input: JSON!) { reportSession(input: $input) }';
export const REPORT_NODE_SIGNALS = 'mutation ReportNodeSignals($signals: JSON!) { reportNodeSignals(signals: $signals) }';
export const REPORT_CONTEXT_SAVED = 'mutation ReportContextSaved($sessionId: String!) { reportContextSaved(sessionId: $sessionId) }';
