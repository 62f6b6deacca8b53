#!/usr/bin/env node
// The floor: the least a Node.js process can do per DNS query. It reads each datagram, turns
// it into its own reply (QR set, RCODE 0, no records) and sends it back, through node:dgram.
// Any Node.js DNS server does at least this much per query, so its CPU per query is the cost
// of Node's UDP path alone. Plain JavaScript, so that it runs on any node binary as it is.
//
//   node bench/servers/minimal.mjs --port 5300
import dgram from 'node:dgram';

const at = process.argv.indexOf('--port');
const port = Number(at > 0 ? process.argv[at + 1] : NaN);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error('minimal: --port PORT (1..65535) is required');
  process.exit(2);
}

const socket = dgram.createSocket('udp4');
socket.on('message', (msg, from) => {
  if (msg.length < 12) return;
  msg[2] = msg[2] | 0x80; // QR: a response
  msg[3] = msg[3] & 0xf0; // RCODE: NOERROR
  socket.send(msg, from.port, from.address);
});
socket.on('error', (err) => {
  console.error(`minimal: ${err.message}`);
  process.exit(1);
});
socket.bind(port, '127.0.0.1', () => console.error(`minimal: answering on 127.0.0.1:${port} with node ${process.version}`));
process.on('SIGTERM', () => process.exit(0));
