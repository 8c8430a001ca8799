/** Light, dark, or the system's choice; kept in local storage, applied as `data-theme` on <html>. */
import { computed, signal } from "@preact/signals";

export type ThemeChoice = "auto" | "light" | "dark";
const STORAGE = "oddsgate.theme";
const media = window.matchMedia("(prefers-color-scheme: dark)");

export const themeChoice = signal<ThemeChoice>((localStorage.getItem(STORAGE) as ThemeChoice) ?? "auto");
const systemDark = signal(media.matches);
media.addEventListener("change", () => {
  systemDark.value = media.matches;
});

/** The theme in effect. */
export const theme = computed(() =>
  themeChoice.value === "auto" ? (systemDark.value ? "dark" : "light") : themeChoice.value,
);

theme.subscribe((value) => {
  document.documentElement.dataset.theme = value;
});

/** Cycles auto → light → dark. */
export function nextTheme(): void {
  const order: ThemeChoice[] = ["auto", "light", "dark"];
  themeChoice.value = order[(order.indexOf(themeChoice.value) + 1) % order.length] as ThemeChoice;
  localStorage.setItem(STORAGE, themeChoice.value);
}

/** The chart colours of the theme in effect (the CSS variables of the page). */
export function chartColors() {
  const style = getComputedStyle(document.documentElement);
  const read = (name: string) => style.getPropertyValue(name).trim();
  return {
    background: read("--surface"),
    text: read("--muted"),
    grid: read("--grid"),
    accent: read("--accent"),
    bandOuter: read("--band-outer"),
    bandInner: read("--band-inner"),
    up: read("--up"),
    down: read("--down"),
  };
}
