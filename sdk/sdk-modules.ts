import * as sdk from './plugin-sdk/index.ts';

let registered = false;

/**
 * Makes `workflow-service/plugin-sdk` (and `workflow-service/plugin-testing`) importable from a
 * plugin anywhere on disk. Bun resolves a bare specifier from the importing file's folder, so a
 * plugin in a PLUGINS_DIR outside the repo, or a package linked from elsewhere, would not find it
 * (and Bun could try to install a package of that name). Bun virtual modules answer these names
 * for every importer with the host's own modules, so a plugin's `ProviderError` is the one the host
 * checks with `instanceof`. (A runtime `onResolve` does not run for bare specifiers in Bun 1.4.)
 * Inside the repo the names also resolve without this, through package.json `exports`.
 */
export function registerSdkModules(): void {
  if (registered) return;
  registered = true;
  Bun.plugin({
    name: 'workflow-service plugin SDK',
    setup(build) {
      build.module('workflow-service/plugin-sdk', () => ({ exports: sdk, loader: 'object' }));
      // Loaded only when a plugin's own test imports it: a running service never loads the harness.
      build.module('workflow-service/plugin-testing', async () => ({
        exports: await import('./plugin-testing/index.ts'),
        loader: 'object',
      }));
    },
  });
}
