import * as sdk from '../plugin-sdk/index.ts';

let registered = false;

/**
 * Makes `workflow-service/plugin-sdk` importable from a plugin anywhere on disk. Bun resolves a bare
 * specifier from the importing file's folder, so a plugin in a PLUGINS_DIR outside the repo would
 * not find it (and Bun could try to install a package of that name). A Bun virtual module answers
 * this name for every importer with the host's own module, so a plugin's `ProviderError` is the
 * one the host checks with `instanceof`. (A runtime `onResolve` does not run for bare specifiers
 * in Bun 1.4.) Inside the repo the name also resolves without this, through package.json `exports`.
 */
export function registerSdkModules(): void {
  if (registered) return;
  registered = true;
  Bun.plugin({
    name: 'workflow-service plugin SDK',
    setup(build) {
      build.module('workflow-service/plugin-sdk', () => ({ exports: sdk, loader: 'object' }));
    },
  });
}
