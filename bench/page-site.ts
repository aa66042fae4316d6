/**
 * Scenario 8's site, a child of bench/run.ts: serves the article (article-page.ts) at `/page` on
 * 127.0.0.1 and reports its port, so serving it costs the measuring process no CPU.
 */
import { createServer } from "node:http";
import { page } from "./article-page.ts";
import { serveIpc } from "./child-ipc.ts";

const html = page();
const server = createServer((req, res) => {
  if (req.url !== "/page") {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.end(html);
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  serveIpc({ port: typeof address === "object" && address !== null ? address.port : 0 });
});
