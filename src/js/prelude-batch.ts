/**
 * `__divan_runMany`, the loop of a map or index batch inside QuickJS: one host call runs many
 * documents (each through the prelude's `run`, so each keeps its own emits, logs, errors and global
 * clean-up), which spares the host a call, a handle and a string copy per document. It stops
 * before a document when the request's budget (`deadline`) or result bound (`charsLeft`) is spent
 * (the host answers the rest as not reached), when the slice of time (`yieldAt`) is over (the host
 * sends a beat and calls again), and after a document whose answer makes the host drop the context
 * (`!`, out of memory). The answers come back joined by newlines, which JSON text never holds raw.
 * Should the host's interrupt stop a document, `__divan_taken` hands over the answers so far.
 * Spliced into PRELUDE, whose closure gives it `run`.
 */
export const RUN_MANY = String.raw`
  var timeNow = Date.now, done = [], OUT_OF_MEMORY = '[false,{"error":"InternalError","message":"out of memory"}';
  function taken() { var text = done.join('\n'); done = []; return text; }
  function runMany(from, count, deadline, yieldAt, charsLeft) {
    done = [];
    for (var i = from; i < from + count; i++) {
      if (i > from && timeNow() >= yieldAt) break;
      if (i > 0 && (charsLeft < 0 || timeNow() >= deadline)) break;
      var answer = run(i);
      done.push(answer);
      charsLeft -= answer.length;
      if (answer.charCodeAt(0) === 33 || answer.lastIndexOf(OUT_OF_MEMORY, 0) === 0) break;
    }
    return taken();
  }
`;
