// The official TypeScript SDK's client with its OAuth provider, as an application embeds it: it
// registers itself (DCR), prints the authorisation URL for the person (a test drives a browser
// there), takes the code on a loopback callback, then lists the tools and calls the two given.
//
//   node ts_sdk_client.mjs <server>/mcp <read tool> <read args JSON> <write tool> <write args JSON>
//
// Every line it prints on stdout is one JSON object: {"authorize": url}, then {"tools": [...]},
// {"read": result}, {"write": result}.
import http from "node:http";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [serverUrl, readTool, readArgs, writeTool, writeArgs] = process.argv.slice(2);
const say = (value) => process.stdout.write(JSON.stringify(value) + "\n");

let received;
const code = new Promise((resolve) => { received = resolve; });
const callback = http.createServer((request, response) => {
  const url = new URL(request.url, "http://127.0.0.1");
  if (url.pathname !== "/callback") { response.writeHead(404).end(); return; }
  response.writeHead(200, { "Content-Type": "text/plain" }).end("You can close this window.");
  received(url.searchParams.get("code"));
});
await new Promise((resolve) => callback.listen(0, "127.0.0.1", resolve));
const redirectUrl = `http://127.0.0.1:${callback.address().port}/callback`;

const kept = {};
const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return {
      client_name: "TypeScript SDK client", redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"], response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  },
  clientInformation() { return kept.client; },
  saveClientInformation(info) { kept.client = info; },
  tokens() { return kept.tokens; },
  saveTokens(tokens) { kept.tokens = tokens; },
  redirectToAuthorization(url) { say({ authorize: url.toString() }); },
  saveCodeVerifier(verifier) { kept.verifier = verifier; },
  codeVerifier() { return kept.verifier; },
};

async function connected() {
  const client = new Client({ name: "switchboard-ts-sdk-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }));
  return client;
}

let client;
try {
  client = await connected();
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
  await transport.finishAuth(await code);
  client = await connected();
}
say({ tools: (await client.listTools()).tools.map((tool) => tool.name) });
say({ read: await client.callTool({ name: readTool, arguments: JSON.parse(readArgs) }) });
say({ write: await client.callTool({ name: writeTool, arguments: JSON.parse(writeArgs) }) });
await client.close();
callback.close();
