// Environment substitution inside tokens. CoreDNS accepts `{$NAME}` and `{%NAME%}`; kdns also
// accepts `{env.NAME}` (the spelling of Caddy 2 and of some CoreDNS-adjacent docs). An unset
// variable becomes the empty string, as in CoreDNS. Substitution happens once per token, after
// lexing, so a value with spaces stays one token and a value is never itself expanded again.

export type Env = Record<string, string | undefined>;

interface Form {
  open: string;
  close: string;
}

const FORMS: readonly Form[] = [
  { open: '{$', close: '}' },
  { open: '{%', close: '%}' },
  { open: '{env.', close: '}' },
];

/** The form whose opening starts at `text[i]`, and the end of its reference, if complete. */
function referenceAt(text: string, i: number): { name: string; end: number } | undefined {
  for (const form of FORMS) {
    if (!text.startsWith(form.open, i)) continue;
    const nameStart = i + form.open.length;
    const close = text.indexOf(form.close, nameStart);
    // `{$}` or an unclosed `{$NAME` is left as written, as Caddy does.
    if (close <= nameStart) return undefined;
    return { name: text.slice(nameStart, close), end: close + form.close.length };
  }
  return undefined;
}

/** `text` with every environment reference replaced by its value ("" when unset). */
export function substituteEnv(text: string, env: Env): string {
  if (!text.includes('{')) return text;
  let out = '';
  let i = 0;
  while (i < text.length) {
    const ref = text[i] === '{' ? referenceAt(text, i) : undefined;
    if (ref) {
      out += env[ref.name] ?? '';
      i = ref.end;
    } else {
      out += text[i];
      i++;
    }
  }
  return out;
}
