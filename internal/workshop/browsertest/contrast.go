package browsertest

// ContrastJS lists the text of the page whose contrast with what is
// behind it is below WCAG 2's level AA: 4.5:1, or 3:1 for large text
// (24px, or 18.66px bold). Colours are resolved by the browser (a canvas
// turns any CSS colour into sRGB); the background is the element's and
// its ancestors' composited until opaque, over the page's canvas colour.
// Text over a background image is not judged (it has no one colour).
// Evaluated on a page, it returns []string, one line per failing text.
const ContrastJS = `(() => {
  const cv = document.createElement('canvas'); cv.width = cv.height = 1;
  const cx = cv.getContext('2d', {willReadFrequently: true});
  const rgba = c => { cx.clearRect(0, 0, 1, 1); cx.fillStyle = '#000'; cx.fillStyle = c; cx.fillRect(0, 0, 1, 1);
    const d = cx.getImageData(0, 0, 1, 1).data; return [d[0], d[1], d[2], d[3] / 255]; };
  const over = (top, under) => { const a = top[3]; return [0, 1, 2].map(i => top[i] * a + under[i] * (1 - a)).concat([1]); };
  const lum = c => { const l = c.slice(0, 3).map(v => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2]; };
  const root = rgba(getComputedStyle(document.documentElement).backgroundColor);
  const canvas = root[3] > 0 ? over(root, matchMedia('(prefers-color-scheme: dark)').matches ? [18, 18, 18, 1] : [255, 255, 255, 1])
    : (matchMedia('(prefers-color-scheme: dark)').matches ? [18, 18, 18, 1] : [255, 255, 255, 1]);
  const behind = el => { const layers = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) { const s = getComputedStyle(e);
      if (s.backgroundImage !== 'none') return null;
      const c = rgba(s.backgroundColor); if (c[3] > 0) layers.push(c); if (c[3] >= 1) break; }
    return layers.reverse().reduce((u, t) => over(t, u), canvas); };
  const bad = [];
  for (const el of document.querySelectorAll('body *')) {
    if (!Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim())) continue;
    if (!el.getClientRects().length) continue;
    const s = getComputedStyle(el);
    if (s.visibility === 'hidden' || s.display === 'none') continue;
    const bg = behind(el); if (!bg) continue;
    const fg = over(rgba(el instanceof SVGElement ? s.fill : s.color), bg);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    const px = parseFloat(s.fontSize), large = px >= 24 || (px >= 18.66 && parseInt(s.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) bad.push(el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined ? '.' + el.className : '') +
      ' "' + el.textContent.trim().slice(0, 40) + '": ' + ratio.toFixed(2) + ':1 (' + s.color + ' on rgb(' + bg.slice(0, 3).join(',') + '))');
  }
  return bad;
})()`
