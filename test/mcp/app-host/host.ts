/**
 * A minimal MCP Apps host for tests, on the official SDK's app-bridge: it renders the app's HTML in a
 * sandboxed iframe, hands it a tool's input and result, and forwards the app's tool calls to
 * `window.callTool` (which the test wires to a real MCP client of the service).
 */
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

declare global {
  interface Window {
    appHtml: string;
    toolArgs: Record<string, unknown>;
    toolResult: unknown;
    callTool(params: unknown): Promise<unknown>;
    hostReady: boolean;
    hostTheme?: 'light' | 'dark';
  }
}

const iframe = document.createElement('iframe');
iframe.setAttribute('sandbox', 'allow-scripts');
iframe.style.cssText = 'width: 100%; height: 560px; border: 1px solid #ccc';
document.body.append(iframe);
const bridge = new AppBridge(
  null,
  { name: 'test-host', version: '1.0.0' },
  { serverTools: {}, openLinks: {} },
  { hostContext: { theme: window.hostTheme ?? 'light' } },
);
bridge.oncalltool = async (params) => (await window.callTool(params)) as never;
bridge.oninitialized = async () => {
  await bridge.sendToolInput({ arguments: window.toolArgs });
  await bridge.sendToolResult(window.toolResult as never);
  window.hostReady = true;
};
// Listening before the document loads: the app says hello as soon as it runs.
const target = iframe.contentWindow as Window;
await bridge.connect(new PostMessageTransport(target, target));
iframe.srcdoc = window.appHtml;
