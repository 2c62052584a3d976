import { PNG } from 'pngjs';
import { GLYPH_HEIGHT, GLYPH_WIDTH, glyphOf } from './initial-glyphs.js';

/**
 * The images of a brand's passes, drawn here (pngjs encodes; nothing is fetched): the icon Wallet
 * shows on the lock screen and in notifications (29 pt at 1×, 2×, 3×) and the logo at the pass's
 * top left (160×50 pt at 1× and 2×): the brand's initial in white on the brand's colour, the
 * colour the wallet page's thumbnail has (same hue from the brand's name).
 */
export type PassImages = Record<string, Buffer>;

export type Rgb = [number, number, number];

/** The brand's hue, as the wallet page computes it (pages/wallet.ts): dark enough for white text. */
export function brandColour(brandName: string): Rgb {
  let hash = 0;
  for (const ch of brandName) hash = (hash * 31 + (ch.codePointAt(0) ?? 0)) >>> 0;
  return hslToRgb(hash % 360, 0.55, 0.3);
}

export const cssRgb = ([r, g, b]: Rgb) => `rgb(${r}, ${g}, ${b})`;

/** CSS's hsl() to RGB: L - a·max(-1, min(k-3, 9-k, 1)), a = S·min(L, 1-L), k = (n + H/30) mod 12. */
function hslToRgb(hue: number, saturation: number, lightness: number): Rgb {
  const a = saturation * Math.min(lightness, 1 - lightness);
  const channel = (n: number) => {
    const k = (n + hue / 30) % 12;
    return Math.round(255 * (lightness - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [channel(0), channel(8), channel(4)];
}

/** A width×height image: a rounded badge of `size` at the left in the brand's colour with the initial, the rest transparent. */
function badge(width: number, height: number, size: number, colour: Rgb, initial: string): Buffer {
  const png = new PNG({ width, height });
  const radius = Math.round(size * 0.2);
  const inside = (x: number, y: number) => {
    const cx = Math.min(Math.max(x, radius), size - 1 - radius);
    const cy = Math.min(Math.max(y, radius), size - 1 - radius);
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2;
  };
  const top = Math.floor((height - size) / 2);
  for (let y = 0; y < size; y++)
    for (let x = 0; x < size; x++)
      if (inside(x, y)) {
        const i = ((top + y) * width + x) * 4;
        png.data[i] = colour[0];
        png.data[i + 1] = colour[1];
        png.data[i + 2] = colour[2];
        png.data[i + 3] = 255;
      }
  const glyph = glyphOf(initial);
  if (glyph) {
    const scale = Math.max(1, Math.floor((size * 0.6) / GLYPH_HEIGHT));
    const left = Math.floor((size - GLYPH_WIDTH * scale) / 2);
    const up = top + Math.floor((size - GLYPH_HEIGHT * scale) / 2);
    for (const [gy, row] of glyph.entries())
      for (const [gx, set] of row.entries()) {
        if (!set) continue;
        for (let dy = 0; dy < scale; dy++)
          for (let dx = 0; dx < scale; dx++) {
            const i = ((up + gy * scale + dy) * width + left + gx * scale + dx) * 4;
            png.data.fill(255, i, i + 4);
          }
      }
  }
  return PNG.sync.write(png, { colorType: 6 });
}

/** The icon and logo files of a brand's passes (file name → PNG). */
export function passImagesOf(brandName: string): PassImages {
  const colour = brandColour(brandName);
  const initial = [...brandName.trim()][0] ?? '';
  const images: PassImages = {};
  for (const [suffix, scale] of [
    ['', 1],
    ['@2x', 2],
    ['@3x', 3],
  ] as const) {
    images[`icon${suffix}.png`] = badge(29 * scale, 29 * scale, 29 * scale, colour, initial);
    if (scale < 3) images[`logo${suffix}.png`] = badge(160 * scale, 50 * scale, 50 * scale, colour, initial);
  }
  return images;
}
