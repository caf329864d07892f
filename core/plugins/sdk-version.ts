/**
 * The plugin SDK's version (semver): what `workflow-service/plugin-sdk` offers. A minor bump adds
 * to the contract (1.1: `enrichOne` and `concurrency`; 1.2: `rowExpressions` and `summary`; 1.3: `costUnits` and a result's `units`;
 * 1.4: a retryable error result's `retryAfterMs`, the host waiting out a provider's Retry-After), a major one changes it. Plugins name the
 * versions they work with in `sdk` (a semver range); the host refuses a misfit at start, by name.
 */
export const SDK_VERSION = '1.4.0';

/** What a plugin without `sdk` is taken to need: the contract as it was before plugins named it. */
export const DEFAULT_SDK_RANGE = '^1.0.0';
