import { createServer, IncomingMessage, request, Server, ServerResponse } from 'node:http';

/**
 * What a Kubernetes Service does in front of an app's replicas, for the test stack: HTTP
 * requests spread round-robin over the replicas the stack says are live, and a request whose
 * connection a replica refuses (killed, not yet listening) tried on the next one, so a caller
 * sees a replica's death only as a failed request when no replica is left. The request body is
 * read whole first (callbacks and API calls are small), so it can be sent again.
 */
export class Balancer {
  private next = 0;
  private readonly server: Server;

  private constructor(upstreams: () => readonly string[]) {
    this.server = createServer((req, res) => void this.forward(req, res, upstreams()));
  }

  /** `upstreams()` names the base URLs of the live replicas at the moment a request arrives. */
  static async start(port: number, upstreams: () => readonly string[]): Promise<Balancer> {
    const balancer = new Balancer(upstreams);
    await new Promise<void>((resolve, reject) => {
      balancer.server.once('error', reject);
      balancer.server.listen(port, '127.0.0.1', resolve);
    });
    return balancer;
  }

  private async forward(
    req: IncomingMessage,
    res: ServerResponse,
    upstreams: readonly string[],
  ): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const start = this.next++;
    for (let i = 0; i < upstreams.length; i++) {
      const target = new URL(req.url ?? '/', upstreams[(start + i) % upstreams.length]);
      const answered = await new Promise<boolean>((resolve) => {
        const out = request(
          target,
          { method: req.method, headers: { ...req.headers, host: target.host } },
          (upstream) => {
            res.writeHead(upstream.statusCode ?? 502, upstream.headers);
            upstream.pipe(res);
            upstream.once('end', () => resolve(true));
            upstream.once('error', () => {
              res.destroy();
              resolve(true);
            });
          },
        );
        // No answer from this replica (connection refused or cut before a status line): the
        // next replica is asked, as a Service's endpoints drop a dead pod.
        out.once('error', () => resolve(res.headersSent));
        out.end(body);
      });
      if (answered) return;
    }
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end('no live replica');
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
