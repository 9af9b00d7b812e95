/** The access log lines the agent's data plane and the edge write: formats, sampling, redaction, byte counting. */
export { AccessLogFormatError, AccessLogWriter, REDACTED, compileLineFormat, countRead, countWritten, redactTarget } from './lines.js';
export type { AccessLogWriterOptions, LineValue } from './lines.js';
