"""Synthetic scenes with ground-truth masks, for training and evaluating samstream's demo model.

The family of samstream's Java ``TestPatternSource`` (connectors/.../video/TestPatternSource.java):
solid shapes (disc, box, triangle, diamond) over a textured background (a smooth colour gradient,
blocky noise in 8-pixel cells and a fine checker). Two styles:

* ``"testpattern"``: the Java pattern's own recipe (its background formulas, four shapes in its kind
  order, its palette, radius = side * (0.07 .. 0.15), the shape fully inside the frame, no rotation,
  no photometric change): what the demo and the synthetic benchmark show the model.
* ``"mixed"``: the same family, varied so the model generalizes: 1 to 6 shapes of random kind,
  size (3.5% .. 20% of the short side), position (sometimes half outside the frame), scale, aspect
  and rotation, palette or random colours, some with a striped texture; backgrounds with other
  cell sizes, noise and checker amplitudes, gradients, smooth coloured blotches; brightness,
  contrast and colour-balance jitter, a little Gaussian noise, sometimes a slight blur.

Later shapes cover earlier ones (occlusion), so each object's ground truth is its *visible* mask;
the *amodal* mask (the whole shape, clipped to the frame) comes too.

Everything runs in torch (on the GPU when one is given) and is a pure function of the seed: a
``SceneGenerator`` draws all its numbers from its own torch generator (tensors) and Python
``random.Random`` (per-chunk choices), so the same seed on the same device gives the same scenes.
"""
import math
import random

import torch
import torch.nn.functional as F

MAX_SHAPES = 6
KINDS = ("disc", "box", "triangle", "diamond")  # the order of the Java Kind enum
PALETTE = (0xE63232, 0x32C850, 0x3C64F0, 0xF0D228, 0xE650DC, 0x28D2DC)  # TestPatternSource's palette

# (width, height), weight: the demo's 320x240 most often, HD and portrait frames too.
FRAME_SIZES = (
    ((320, 240), 5), ((640, 480), 2), ((1280, 720), 2), ((960, 540), 1), ((1024, 576), 1),
    ((512, 512), 1), ((400, 300), 1), ((800, 600), 1), ((480, 640), 1), ((240, 320), 1),
)


def _palette_tensor(device):
    return torch.tensor([[(c >> 16) & 255, (c >> 8) & 255, c & 255] for c in PALETTE], dtype=torch.float32,
                        device=device)


class SceneGenerator:
    """Deterministic scenes from one seed. ``render`` makes a chunk of same-sized frames."""

    def __init__(self, seed, device="cuda"):
        self.device = torch.device(device)
        self.gen = torch.Generator(device=self.device)
        self.gen.manual_seed(seed)
        self.py = random.Random(seed)
        self.palette = _palette_tensor(self.device)

    # ---- random numbers (all from this generator) ----
    def rand(self, *shape):
        return torch.rand(shape, generator=self.gen, device=self.device)

    def uniform(self, lo, hi, *shape):
        return lo + (hi - lo) * self.rand(*shape)

    def normal(self, *shape):
        return torch.randn(shape, generator=self.gen, device=self.device)

    def randint(self, lo, hi, *shape):
        """Integers in [lo, hi)."""
        return torch.randint(lo, hi, shape, generator=self.gen, device=self.device)

    def coin(self, p, *shape):
        return self.rand(*shape) < p

    # ---- per-chunk choices ----
    def pick_frame(self, testpattern_fraction=0.35, random_size_fraction=0.25):
        """A frame size (width, height) and a style for the next chunk."""
        style = "testpattern" if self.py.random() < testpattern_fraction else "mixed"
        if self.py.random() < random_size_fraction:
            w = self.py.randint(200, 1400)
            aspect = self.py.uniform(0.55, 1.9)
            h = int(min(1100, max(160, round(w / aspect))))
            return (w, h), style
        sizes = [s for s, _ in FRAME_SIZES]
        weights = [wt for _, wt in FRAME_SIZES]
        return self.py.choices(sizes, weights)[0], style

    # ---- rendering ----
    def render(self, n, width, height, style="mixed"):
        """``n`` frames of ``width`` x ``height``.

        Returns a dict of tensors on the generator's device:
          images   uint8 [n, H, W, 3]  RGB
          visible  bool  [n, M, H, W]  each shape's visible pixels (ground truth), M = MAX_SHAPES
          amodal   bool  [n, M, H, W]  each whole shape, clipped to the frame
          present  bool  [n, M]        which of the M slots hold a shape (drawing order = slot order)
          center   float [n, M, 2]     shape centre (x, y), pixels
          radius   float [n, M]
          kind     long  [n, M]        index into KINDS
          pattern_box float [n, M, 4]  TestPatternSource.objectsAt's box: floor(c - r), ceil(c + r)
        """
        if style not in ("testpattern", "mixed"):
            raise ValueError(f"unknown style {style!r}")
        tp = style == "testpattern"
        d = self.device
        H, W, M = height, width, MAX_SHAPES
        xs = torch.arange(W, device=d, dtype=torch.float32)
        ys = torch.arange(H, device=d, dtype=torch.float32)
        img = self._background_testpattern(n, H, W, xs, ys) if tp else self._background_mixed(n, H, W, xs, ys)

        s = self._shapes(n, H, W, tp)
        # Offsets of each pixel centre from each shape's centre, in the shape's own (rotated, scaled) frame.
        dx = xs.view(1, 1, 1, W) + 0.5 - s["cx"].reshape(n, M, 1, 1)
        dy = ys.view(1, 1, H, 1) + 0.5 - s["cy"].reshape(n, M, 1, 1)
        cos = torch.cos(s["theta"]).reshape(n, M, 1, 1)
        sin = torch.sin(s["theta"]).reshape(n, M, 1, 1)
        u = (cos * dx + sin * dy) / s["sx"].reshape(n, M, 1, 1)
        v = (cos * dy - sin * dx) / s["sy"].reshape(n, M, 1, 1)
        del dx, dy
        r = s["r"].reshape(n, M, 1, 1)
        au, av = u.abs(), v.abs()
        disc = u * u + v * v <= r * r
        box = (au <= r) & (av <= r * s["box_h"].reshape(n, M, 1, 1))
        tri = (v <= r * 0.8) & (v >= -r) & (au <= (v + r) * 0.6)
        diamond = au + av <= r
        kind = s["kind"].reshape(n, M, 1, 1)
        cover = torch.where(kind == 0, disc, torch.where(kind == 1, box, torch.where(kind == 2, tri, diamond)))
        cover &= s["present"].reshape(n, M, 1, 1)
        del disc, box, tri, diamond, au, av

        for j in range(M):
            colour = s["rgb"][:, j].reshape(n, 3, 1, 1)
            amp = s["tex_amp"][:, j].reshape(n, 1, 1, 1)
            phi = s["tex_dir"][:, j].reshape(n, 1, 1, 1)
            freq = s["tex_freq"][:, j].reshape(n, 1, 1, 1)
            tex = amp * torch.sin(freq * (u[:, j:j + 1] * torch.cos(phi) + v[:, j:j + 1] * torch.sin(phi)))
            img = torch.where(cover[:, j:j + 1], colour + tex, img)
        del u, v

        visible = torch.empty_like(cover)
        above = torch.zeros_like(cover[:, 0])
        for j in range(M - 1, -1, -1):
            visible[:, j] = cover[:, j] & ~above
            above |= cover[:, j]

        if not tp:
            img = self._photometric(img)
        images = img.round().clamp(0, 255).to(torch.uint8).permute(0, 2, 3, 1).contiguous()
        cx, cy, rr = s["cx"], s["cy"], s["r"]
        pattern_box = torch.stack([torch.floor(cx - rr), torch.floor(cy - rr), torch.ceil(cx + rr),
                                   torch.ceil(cy + rr)], -1)
        return dict(images=images, visible=visible, amodal=cover, present=s["present"],
                    center=torch.stack([cx, cy], -1), radius=rr, kind=s["kind"], pattern_box=pattern_box)

    def _background_testpattern(self, n, H, W, xs, ys):
        """TestPatternSource.texturedBackground: gradient + 8-pixel blocky noise in [-20, 20] + checker +-6."""
        cell = 8
        gh, gw = (H + cell - 1) // cell, (W + cell - 1) // cell
        noise = self.randint(-20, 21, n, gh, gw).float()
        iy = (ys // cell).long()
        ix = (xs // cell).long()
        nz = noise[:, iy][:, :, ix]  # [n, H, W]
        checker = ((torch.div(xs, 2, rounding_mode="floor").view(1, W)
                    + torch.div(ys, 2, rounding_mode="floor").view(H, 1)) % 2 == 0)
        nz = nz + (checker.float() * 12.0 - 6.0)
        phase = self.uniform(0, 2 * math.pi, n).view(n, 1, 1)
        uu = (xs / W).view(1, 1, W)
        vv = (ys / H).view(1, H, 1)
        r = 90 + torch.trunc(40 * torch.sin(phase + 2 * math.pi * uu)) + nz
        g = 100 + torch.trunc(40 * vv) + nz
        b = 110 + torch.trunc(40 * torch.cos(phase + 2 * math.pi * (uu + vv) / 2)) + nz
        return torch.stack([r, g, b], 1).clamp(0, 255)

    def _background_mixed(self, n, H, W, xs, ys):
        d = self.device
        # Blocky noise with a per-image cell size (2..16 px) and amplitude (0..32), shared by the channels.
        cell = self.randint(2, 17, n).float()
        amp = self.uniform(0, 32, n)
        gh, gw = H // 2 + 1, W // 2 + 1
        grid = self.uniform(-1, 1, n, gh, gw) * amp.view(n, 1, 1)
        iy = torch.div(ys.view(1, H), cell.view(n, 1), rounding_mode="floor").long()  # [n, H]
        ix = torch.div(xs.view(1, W), cell.view(n, 1), rounding_mode="floor").long()  # [n, W]
        nz = grid[torch.arange(n, device=d).view(n, 1, 1), iy.view(n, H, 1), ix.view(n, 1, W)]
        # Checker with period 1..3 px and amplitude 0..10.
        period = self.randint(1, 4, n).float().view(n, 1, 1)
        parity = (torch.div(xs.view(1, 1, W), period, rounding_mode="floor")
                  + torch.div(ys.view(1, H, 1), period, rounding_mode="floor")) % 2
        nz = nz + self.uniform(0, 10, n).view(n, 1, 1) * (1 - 2 * parity)
        # Smooth gradients per channel.
        base = self.uniform(45, 190, n, 3, 1, 1)
        gamp = self.uniform(0, 60, n, 3, 1, 1)
        gamp = torch.where(self.coin(0.1, n, 1, 1, 1), torch.zeros_like(gamp), gamp)  # some flat backgrounds
        freq = self.uniform(0.3, 2.0, n, 3, 1, 1)
        phase = self.uniform(0, 2 * math.pi, n, 3, 1, 1)
        ang = self.uniform(0, 2 * math.pi, n, 3, 1, 1)
        uu = (xs / W).view(1, 1, 1, W)
        vv = (ys / H).view(1, 1, H, 1)
        t = uu * torch.cos(ang) + vv * torch.sin(ang)
        img = base + gamp * torch.sin(phase + 2 * math.pi * freq * t) + nz.unsqueeze(1)
        # Per-channel colour noise, a little.
        img = img + self.uniform(0, 6, n, 1, 1, 1) * self.uniform(-1, 1, n, 3, H, W)
        # Smooth coloured blotches on half the images (distractors that are not objects).
        gy, gx = self.py.randint(3, 9), self.py.randint(3, 9)
        blot = F.interpolate(self.uniform(-1, 1, n, 3, gy, gx), size=(H, W), mode="bicubic", align_corners=False)
        blot_amp = self.uniform(0, 45, n, 1, 1, 1) * self.coin(0.5, n, 1, 1, 1)
        return img + blot * blot_amp

    def _shapes(self, n, H, W, tp):
        d = self.device
        M = MAX_SHAPES
        side = min(W, H)
        slots = torch.arange(M, device=d).view(1, M)
        if tp:
            present = (slots < 4).expand(n, M).clone()
            kind = (slots % 4).expand(n, M).clone()
            first = self.randint(0, len(PALETTE), n).view(n, 1)
            rgb = self.palette[(first + slots) % len(PALETTE)]  # [n, M, 3]
            r = torch.clamp(torch.floor(side * (0.07 + 0.08 * self.rand(n, M))), min=3)
            cx = r + self.rand(n, M) * torch.clamp(W - 2 * r, min=1)
            cy = r + self.rand(n, M) * torch.clamp(H - 2 * r, min=1)
            theta = torch.zeros(n, M, device=d)
            sx = torch.ones(n, M, device=d)
            sy = torch.ones(n, M, device=d)
            box_h = torch.full((n, M), 0.7, device=d)
            tex_amp = torch.zeros(n, M, device=d)
        else:
            count = self.randint(1, M + 1, n).view(n, 1)
            present = slots < count
            kind = self.randint(0, 4, n, M)
            pal = self.palette[self.randint(0, len(PALETTE), n, M)] + self.uniform(-20, 20, n, M, 3)
            rnd = self.uniform(0, 255, n, M, 3)
            rgb = torch.where(self.coin(0.5, n, M, 1), pal, rnd).clamp(0, 255)
            r = torch.clamp(side * self.uniform(0.035, 0.2, n, M), min=3)
            inside_x = r + self.rand(n, M) * torch.clamp(W - 2 * r, min=1)
            inside_y = r + self.rand(n, M) * torch.clamp(H - 2 * r, min=1)
            edge_x = -0.4 * r + self.rand(n, M) * (W + 0.8 * r)
            edge_y = -0.4 * r + self.rand(n, M) * (H + 0.8 * r)
            partly_out = self.coin(0.25, n, M)
            cx = torch.where(partly_out, edge_x, inside_x)
            cy = torch.where(partly_out, edge_y, inside_y)
            theta = torch.where(self.coin(0.5, n, M), self.uniform(-math.pi, math.pi, n, M), torch.zeros(n, M, device=d))
            scaled = self.coin(0.5, n, M)
            sx = torch.where(scaled, self.uniform(0.6, 1.4, n, M), torch.ones(n, M, device=d))
            sy = torch.where(scaled, self.uniform(0.6, 1.4, n, M), torch.ones(n, M, device=d))
            box_h = torch.where(self.coin(0.5, n, M), self.uniform(0.35, 1.0, n, M), torch.full((n, M), 0.7, device=d))
            tex_amp = self.uniform(5, 30, n, M) * self.coin(0.3, n, M)
        return dict(present=present, kind=kind, rgb=rgb, r=r, cx=cx, cy=cy, theta=theta, sx=sx, sy=sy, box_h=box_h,
                    tex_amp=tex_amp, tex_dir=self.uniform(0, math.pi, n, M), tex_freq=self.uniform(0.08, 0.5, n, M))

    def _photometric(self, img):
        n = img.shape[0]
        contrast = self.uniform(0.75, 1.25, n, 1, 1, 1) * self.uniform(0.93, 1.07, n, 3, 1, 1)
        bright = self.uniform(-30, 30, n, 1, 1, 1)
        img = (img - 128) * contrast + 128 + bright
        sigma = self.uniform(0, 6, n, 1, 1, 1) * self.coin(0.5, n, 1, 1, 1)
        img = img + sigma * self.normal(*img.shape)
        blurred = F.avg_pool2d(img, 3, stride=1, padding=1, count_include_pad=False)
        return torch.where(self.coin(0.2, n, 1, 1, 1), blurred, img)
