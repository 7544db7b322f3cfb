// Preloaded (node --import) into the reference GitHub MCP server by
// BenchmarkToolsCallPeers: the server calls https://api.github.com with the global
// fetch, and this sends each of those calls to the benchmark's fake GitHub at
// SWITCHBOARD_BENCH_GITHUB_URL instead. Any other URL is refused, so nothing the
// server does leaves the machine.
const base = process.env.SWITCHBOARD_BENCH_GITHUB_URL;
if (!base || !/^http:\/\/127\.0\.0\.1:\d+$/.test(base)) {
  throw new Error(`SWITCHBOARD_BENCH_GITHUB_URL must be http://127.0.0.1:PORT, not ${JSON.stringify(base)}`);
}
const github = "https://api.github.com/";
const fetchForReal = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  if (!url.startsWith(github)) {
    return Promise.reject(new Error(`redirect.mjs: refused a request to ${url}: only ${github} is redirected`));
  }
  return fetchForReal(base + "/" + url.slice(github.length), init);
};
