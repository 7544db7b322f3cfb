// frameworks.mjs drives the MCP client layer of agent frameworks (no model is called)
// against one MCP URL and prints, as one JSON line, what each supports there:
// {"client": {"feature": "yes" | "no" | "failed: …"}}. "no" means the framework's MCP
// client offers no way to do it; "failed" that it offers one and it did not work.
// Usage: node frameworks.mjs URL KEY
import { MCPServerStreamableHttp } from '@openai/agents';
import { MCPClient } from '@mastra/mcp';
import { createMCPClient, ElicitationRequestSchema } from '@ai-sdk/mcp';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';

const [url, key] = process.argv.slice(2);
const headers = { Authorization: `Bearer ${key}` };
const features = ['connect', 'list', 'call', 'progress', 'cancel', 'resources', 'prompts', 'confirmation'];

const texts = (r) => JSON.stringify(r);
const expect = (cond, what) => { if (!cond) throw new Error(what); };

async function check(out, feature, fn) {
  try {
    const v = await fn();
    out[feature] = v === false ? 'no' : 'yes';
  } catch (e) {
    out[feature] = 'failed: ' + String(e?.message ?? e).slice(0, 300);
  }
}

// cancelled reports whether a call of test_wait aborted by signal rejects.
async function cancelled(start) {
  const ac = new AbortController();
  const p = start(ac.signal);
  setTimeout(() => ac.abort(), 300);
  try { await p; } catch { return true; }
  throw new Error('the aborted call resolved');
}

async function openai() {
  const out = {};
  const s = new MCPServerStreamableHttp({ url, name: 'hub', requestInit: { headers }, cacheToolsList: false });
  try {
    await check(out, 'connect', () => s.connect());
    await check(out, 'list', async () => { const t = await s.listTools(); expect(t.some((x) => x.name === 'test_simple_text'), 'test_simple_text not listed'); });
    await check(out, 'call', async () => { const r = await s.callTool('test_simple_text', {}); expect(texts(r).includes('simple text response'), texts(r)); });
    out.progress = 'no';
    await check(out, 'cancel', () => cancelled((signal) => s.callTool('test_wait', {}, null, { signal })));
    await check(out, 'resources', async () => {
      const l = await s.listResources(); expect(l.resources.some((r) => r.uri === 'test://static-text'), 'not listed');
      const r = await s.readResource('test://static-text'); expect(texts(r).includes('static text resource'), texts(r));
    });
    out.prompts = 'no';
    out.confirmation = 'no';
  } finally { await s.close().catch(() => {}); }
  return out;
}

async function mastra() {
  const out = {};
  const c = new MCPClient({ id: 'switchboard-e2e', servers: { hub: { url: new URL(url), requestInit: { headers }, enableProgressTracking: true,
    inputRequests: async () => ({ action: 'accept', content: { username: 'ada', email: 'ada@example.com' } }) } } });
  try {
    let tools;
    await check(out, 'connect', async () => { tools = await c.listTools(); });
    await check(out, 'list', async () => expect(tools && tools.hub_test_simple_text, 'hub_test_simple_text not listed: ' + Object.keys(tools ?? {}).slice(0, 5)));
    await check(out, 'call', async () => { const r = await tools.hub_test_simple_text.execute({}, {}); expect(texts(r).includes('simple text response'), texts(r)); });
    await check(out, 'progress', async () => {
      const seen = [];
      await c.progress.onUpdate('hub', (p) => seen.push(p.progress));
      await tools.hub_test_tool_with_progress.execute({}, {});
      expect(seen.includes(100), 'progress seen: ' + JSON.stringify(seen));
    });
    out.cancel = 'no';
    await check(out, 'resources', async () => {
      const l = await c.resources.list(); expect(l.hub.some((r) => r.uri === 'test://static-text'), 'not listed');
      const r = await c.resources.read('hub', 'test://static-text'); expect(texts(r).includes('static text resource'), texts(r));
    });
    await check(out, 'prompts', async () => {
      const l = await c.prompts.list(); expect(l.hub.some((p) => p.name === 'test_simple_prompt'), 'not listed');
      const r = await c.prompts.get({ serverName: 'hub', name: 'test_prompt_with_arguments', args: { arg1: 'a', arg2: 'b' } });
      expect(texts(r).includes("arg1='a'"), texts(r));
    });
    await check(out, 'confirmation', async () => {
      const r = await tools.hub_test_elicitation.execute({ message: 'Who?' }, {});
      expect(texts(r).includes('action=accept'), texts(r));
    });
  } finally { await c.disconnect().catch(() => {}); }
  return out;
}

async function aisdk() {
  const out = {};
  let c;
  try {
    await check(out, 'connect', async () => {
      c = await createMCPClient({ transport: { type: 'http', url, headers }, capabilities: { elicitation: {} } });
    });
    let tools;
    await check(out, 'list', async () => { tools = await c.tools(); expect(tools.test_simple_text, 'test_simple_text not listed'); });
    await check(out, 'call', async () => { const r = await tools.test_simple_text.execute({}, { toolCallId: '1', messages: [] }); expect(texts(r).includes('simple text response'), texts(r)); });
    out.progress = 'no';
    await check(out, 'cancel', () => cancelled((signal) => c.callTool({ name: 'test_wait', arguments: {}, options: { signal } })));
    await check(out, 'resources', async () => {
      const l = await c.listResources(); expect(l.resources.some((r) => r.uri === 'test://static-text'), 'not listed');
      const r = await c.readResource({ uri: 'test://static-text' }); expect(texts(r).includes('static text resource'), texts(r));
    });
    await check(out, 'prompts', async () => {
      const l = await c.listPrompts(); expect(l.prompts.some((p) => p.name === 'test_simple_prompt'), 'not listed');
      const r = await c.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } });
      expect(texts(r).includes("arg1='a'"), texts(r));
    });
    await check(out, 'confirmation', async () => {
      c.onElicitationRequest(ElicitationRequestSchema, async () => ({ action: 'accept', content: { username: 'ada', email: 'ada@example.com' } }));
      const r = await c.callTool({ name: 'test_elicitation', arguments: { message: 'Who?' } });
      expect(texts(r).includes('action=accept'), texts(r));
    });
  } finally { await c?.close().catch(() => {}); }
  return out;
}

async function langchain() {
  const out = {};
  const c = new MultiServerMCPClient({ mcpServers: { hub: { transport: 'http', url, headers } }, prefixToolNameWithServerName: false });
  try {
    let tools;
    await check(out, 'connect', async () => { tools = await c.getTools(); });
    const tool = (n) => tools.find((t) => t.name === n);
    await check(out, 'list', async () => expect(tool('test_simple_text'), 'test_simple_text not listed'));
    await check(out, 'call', async () => { const r = await tool('test_simple_text').invoke({}); expect(texts(r).includes('simple text response'), texts(r)); });
    out.progress = 'no';
    out.cancel = 'no';
    await check(out, 'resources', async () => {
      const l = await c.listResources('hub'); expect(l.hub.some((r) => r.uri === 'test://static-text'), 'not listed');
      const r = await c.readResource('hub', 'test://static-text'); expect(texts(r).includes('static text resource'), texts(r));
    });
    out.prompts = 'no';
    out.confirmation = 'no';
  } finally { await c.close().catch(() => {}); }
  return out;
}

const result = {};
for (const [name, run] of Object.entries({ 'OpenAI Agents SDK': openai, Mastra: mastra, 'Vercel AI SDK': aisdk, LangChain: langchain })) {
  try { result[name] = await run(); } catch (e) { result[name] = { connect: 'failed: ' + String(e?.message ?? e).slice(0, 300) }; }
  for (const f of features) result[name][f] ??= 'failed: not reached';
}
console.log(JSON.stringify(result));
process.exit(0);
