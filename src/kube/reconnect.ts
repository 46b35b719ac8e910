// The API server answering again after a client could not reach it: a RequestObserver (the client's
// per-request hook, "<error>" when no response came) that calls `onBack` at the first answer after a
// failure, so loops waiting out a long back-off (the pod list/watch: up to 30 s) can try at once.
// No upstream counterpart: client-go's reflectors each wait out their own back-off.
import type { RequestAttempt, RequestObserver } from "./client.ts";

/** `inner` (metrics), and `onBack()` once per outage, at the first response after a request got none. */
export function reconnectObserver(inner: RequestObserver | undefined, onBack: () => void): RequestObserver {
  let down = false;
  return {
    observe(a: RequestAttempt) {
      inner?.observe(a);
      if (a.code === "<error>") down = true;
      else if (down) {
        down = false;
        onBack();
      }
    },
  };
}
