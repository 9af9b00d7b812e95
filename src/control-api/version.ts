/**
 * TUNA_VERSION is the version of tuna this build is, as `GET /v1/edge` reports it. It is a
 * constant rather than a read of package.json at run time so the compiled edge needs no file
 * beside it; test/e2e/control-edge-info.test.ts fails when it and package.json disagree.
 */
export const TUNA_VERSION = '0.1.0';
