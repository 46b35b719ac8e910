// $(VAR) expansion as upstream's third_party/forked/golang/expansion: `$(NAME)` is replaced by the
// mapping's value; a name the mapping does not know stays `$(NAME)` verbatim; `$$` is an escaped `$`;
// a `$` before anything else, or an unterminated `$(`, is kept as written. Used for env values (with
// the variables defined before them), command and args (with the container's final env).

/** upstream MappingFuncFor: the first context that defines the name wins; unknown → `$(name)`. */
export function mappingFor(...contexts: ReadonlyMap<string, string>[]): (name: string) => string {
  return (name) => {
    for (const c of contexts) {
      const v = c.get(name);
      if (v !== undefined) return v;
    }
    return `$(${name})`;
  };
}

/** upstream expansion.Expand. */
export function expand(input: string, mapping: (name: string) => string): string {
  let out = "";
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== "$" || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const next = input[cursor + 1];
    let advance = 1;
    if (next === "$") out += "$";
    else if (next === "(") {
      const close = input.indexOf(")", cursor + 2);
      if (close < 0) out += "$(";
      else {
        out += mapping(input.slice(cursor + 2, close));
        advance = close - cursor;
      }
    } else out += `$${next}`;
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}
