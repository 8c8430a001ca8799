/**
 * Hash routing (`#/event/X`): the server serves one page at `/`, and no path of the app can collide
 * with an API route.
 */
import { signal } from "@preact/signals";

export interface Route {
  /** The path after `#`, e.g. `/event/KXHIGHNY-26NOV26`. */
  path: string;
  /** Its segments, e.g. ["event", "KXHIGHNY-26NOV26"]. */
  parts: string[];
  params: URLSearchParams;
}

function parse(): Route {
  const raw = location.hash.replace(/^#/, "") || "/";
  const [path = "/", query = ""] = raw.split("?");
  return {
    path,
    parts: path.split("/").filter(Boolean).map(decodeURIComponent),
    params: new URLSearchParams(query),
  };
}

export const route = signal<Route>(parse());
window.addEventListener("hashchange", () => {
  route.value = parse();
});

/** The href of an app path. */
export function link(path: string): string {
  return `#${path}`;
}

/** Goes to an app path. */
export function navigate(path: string): void {
  location.hash = path;
}
