// `tls CERT KEY [CA] { client_auth MODE; keylog FILE }`: the certificate of a tls:// or https://
// server block. The files are read and checked here, so a bad path or a key that does not match
// its certificate is a Corefile error at setup (and `kdns serve --check` finds it).

import { readFileSync } from 'node:fs';
import { argPosition, blockProperties, expectArgs, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive, type Position } from '../../lib/corefile/ast.js';
import type { ClientAuth, Plugin, SetupFn, TlsSettings } from '../../server/plugin.js';
import { checkTlsSettings } from '../../server/tlslistener.js';
import { corefileRelative } from '../pkg/corefilepath.js';

const CLIENT_AUTH: readonly ClientAuth[] = ['nocert', 'request', 'require', 'verify_if_given', 'require_and_verify'];

function isClientAuth(s: string): s is ClientAuth {
  return (CLIENT_AUTH as readonly string[]).includes(s);
}

/** What the directive says, paths resolved against the Corefile's folder. */
export interface TlsDirective {
  cert: string;
  key: string;
  ca?: string;
  clientAuth: ClientAuth;
  keylog?: string;
}

/** Parses the directive (pure: no file is read). */
export function parseTls(d: Directive, corefilePath: string): TlsDirective {
  if (d.args.length === 0) {
    throw CorefileError.at(d, 'tls without CERT and KEY asks for ACME certificates, which kdns does not obtain; write "tls CERT KEY [CA]" (e.g. from a cert-manager Secret)');
  }
  const [cert, key, ca] = expectArgs(d, 2, 3).map((p) => corefileRelative(p, corefilePath));
  const out: TlsDirective = { cert: cert as string, key: key as string, clientAuth: 'nocert', ...(ca !== undefined ? { ca } : {}) };
  for (const p of blockProperties(d, 'tls')) {
    switch (p.name) {
      case 'client_auth': {
        const mode = expectArgs(p, 1, 1)[0] as string;
        if (!isClientAuth(mode)) {
          throw CorefileError.at(argPosition(p, 0), `unknown authentication type "${mode}" for client_auth (use ${CLIENT_AUTH.join(', ')})`);
        }
        out.clientAuth = mode;
        break;
      }
      case 'keylog': {
        const file = expectArgs(p, 1, 1)[0] as string;
        out.keylog = corefileRelative(file, corefilePath);
        break;
      }
      default:
        unknownProperty(p, 'tls');
    }
  }
  return out;
}

function readPem(path: string, what: string, pos: Position): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw CorefileError.at(pos, `tls: cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}

/** Reads the files and checks that they make a TLS server identity. */
export function loadTls(d: Directive, parsed: TlsDirective): TlsSettings {
  const settings: TlsSettings = {
    cert: readPem(parsed.cert, 'certificate', argPosition(d, 0)),
    key: readPem(parsed.key, 'key', argPosition(d, 1)),
    clientAuth: parsed.clientAuth,
    ...(parsed.ca !== undefined ? { ca: readPem(parsed.ca, 'CA', argPosition(d, 2)) } : {}),
    ...(parsed.keylog !== undefined ? { keylog: parsed.keylog } : {}),
  };
  try {
    checkTlsSettings(settings);
  } catch (e) {
    throw CorefileError.at(d, `tls: ${parsed.cert} and ${parsed.key} do not make a TLS identity: ${e instanceof Error ? e.message : String(e)}`);
  }
  return settings;
}

export const setup: SetupFn = (ctx) => {
  const d = ctx.directive;
  if (ctx.block.settings.tls) throw CorefileError.at(d, 'TLS already configured for this server block (one tls directive per block)');
  const settings = loadTls(d, parseTls(d, ctx.corefilePath));
  ctx.block.settings.tls = settings;
  if (settings.keylog) ctx.shared.log.plugin('tls').warn(`Writing TLS Key Log to "${settings.keylog}"`);
  const plugin: Plugin = { name: 'tls' };
  return plugin;
};
