// The theme: "system" follows the desktop (prefers-color-scheme), "light" and "dark" pin it.
// It is one attribute on <html>; styles.css keys its colour variables on it, so a change is
// live, with no reload.
import type { ThemeDto } from "../../ipc/bindings";

/** Applies a theme to the document now. */
export function applyTheme(theme: ThemeDto, root: HTMLElement = document.documentElement): void {
  if (theme === "system") delete root.dataset.theme;
  else root.dataset.theme = theme;
}

/** The theme the document shows now. */
export function currentTheme(root: HTMLElement = document.documentElement): ThemeDto {
  const t = root.dataset.theme;
  return t === "light" || t === "dark" ? t : "system";
}
