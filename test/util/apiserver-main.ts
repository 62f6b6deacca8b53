// A Kubernetes API server for tests run in another network namespace: the FakeApiServer behind
// TLS, as in-cluster clients (kdns with no kubernetes endpoint) reach the real one at
// https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT. Run as a script:
//   node apiserver-main.js CONFIG.json
// where CONFIG is {host, port, certFile, keyFile, seed: {"/api/v1/services": [objects], …}}.
// Prints "listening" once it accepts connections.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { createServer } from 'node:tls';
import { FakeApiServer } from './fakeapi.js';

interface Config {
  host: string;
  port: number;
  certFile: string;
  keyFile: string;
  seed: Record<string, Array<{ metadata: { name: string; namespace?: string } }>>;
}

const config = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as Config;
const api = new FakeApiServer();
for (const [path, objects] of Object.entries(config.seed)) api.seed(path, objects);
const target = new URL(await api.listen());

// TLS ends here; the bytes inside go to the fake server as they are (a watch is a response that never ends).
const server = createServer({ cert: readFileSync(config.certFile), key: readFileSync(config.keyFile) }, (tlsSocket) => {
  const plain = connect(Number(target.port), target.hostname);
  const close = (): void => {
    tlsSocket.destroy();
    plain.destroy();
  };
  tlsSocket.on('error', close).on('close', close);
  plain.on('error', close).on('close', close);
  tlsSocket.pipe(plain).pipe(tlsSocket);
});
server.listen(config.port, config.host, () => console.log('listening'));
process.on('SIGTERM', () => process.exit(0));
