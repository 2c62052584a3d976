import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { brandColour, passImagesOf } from './pass-images.js';

describe('pass images', () => {
  it("take the wallet page's colour: CSS hsl(hue 55% 30%) of the brand name's hash", () => {
    // The page's thumbnail: hue = (31·h + code point) mod 2^32, mod 360. 'Acme' hashes to hue 314.
    expect(brandColour('Acme')).toEqual([119, 34, 99]); // hsl(314 55% 30%), as a browser computes it
    expect(brandColour('\u0000')).toEqual([119, 34, 34]); // hue 0: hsl(0 55% 30%)
    expect(brandColour('x')).toEqual([34, 119, 34]); // 'x' is 120: hsl(120 55% 30%)
  });

  it('draw the initial in white on the colour, transparent around the rounded corners', () => {
    const images = passImagesOf('Acme');
    expect(Object.keys(images).sort()).toEqual(['icon.png', 'icon@2x.png', 'icon@3x.png', 'logo.png', 'logo@2x.png']);
    const icon = PNG.sync.read(images['icon@3x.png'] as Buffer);
    const at = (x: number, y: number) => [
      ...icon.data.subarray((y * icon.width + x) * 4, (y * icon.width + x) * 4 + 4),
    ];
    expect(at(0, 0)[3]).toBe(0); // the corner is cut
    expect(at(4, 43)).toEqual([119, 34, 99, 255]); // the colour at the left edge
    // Some pixels are the white glyph, most are the colour.
    const pixels = Array.from({ length: icon.width * icon.height }, (_, i) =>
      at(i % icon.width, Math.floor(i / icon.width)),
    );
    const white = pixels.filter((p) => p.join() === '255,255,255,255').length;
    expect(white).toBeGreaterThan(100);
    expect(white).toBeLessThan(pixels.length / 3);
    const logo = PNG.sync.read(images['logo@2x.png'] as Buffer);
    expect([logo.width, logo.height]).toEqual([320, 100]);
    expect(logo.data[(50 * 320 + 300) * 4 + 3]).toBe(0); // right of the badge: transparent
  });
});
