/**
 * Shared io-ts helpers (STYLE: io-ts at every boundary): closed objects for user-written specs and
 * request bodies, loose objects for objects read in part, JSON text, and errors that name the
 * field. This room imports nothing of the project.
 */
export { closedObject, unknownField } from './closed-object.js';
export type { ClosedObjectOf, Props } from './closed-object.js';
export { decodeWith, firstProblem, formatError, formatErrors } from './decode.js';
export type { DecodeResult } from './decode.js';
export { jsonText } from './json.js';
export { anyMapping, looseBoolean, looseList, looseNumber, looseObject, looseString, required } from './loose.js';
export type { LooseField, LooseObjectOf, LooseProps, RequiredField } from './loose.js';
