"""SAM 3's detection loss, compact (our own code after sam3/train/loss/loss_fns.py and matcher.py): Hungarian
matching of a phrase's queries to its instances on every decoder layer, IoU-aware score BCE, presence BCE, L1 +
GIoU on boxes, mask focal + dice on the last layer. The section "Training" of this folder's README gives the
weights and what is left out."""
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sam2_demo_model"))
import train_sam2_demo_model as sam2_demo  # noqa: E402  (our own: mask_box)


def mask_boxes(masks):
    """bool [..., S, S] -> normalized cx, cy, w, h [..., 4] of each mask's box (zeros when empty)."""
    s = masks.shape[-1]
    box = sam2_demo.mask_box(masks.flatten(0, -3)).view(*masks.shape[:-2], 4) / s
    return torch.cat([(box[..., :2] + box[..., 2:]) / 2, box[..., 2:] - box[..., :2]], -1)


def xyxy(b):
    return torch.cat([b[..., :2] - b[..., 2:] / 2, b[..., :2] + b[..., 2:] / 2], -1)


def giou_pairs(a, b):
    """Generalized IoU of boxes a [..., 4] and b [..., 4] (xyxy), elementwise with broadcasting."""
    area_a = (a[..., 2] - a[..., 0]).clamp(min=0) * (a[..., 3] - a[..., 1]).clamp(min=0)
    area_b = (b[..., 2] - b[..., 0]).clamp(min=0) * (b[..., 3] - b[..., 1]).clamp(min=0)
    lt, rb = torch.maximum(a[..., :2], b[..., :2]), torch.minimum(a[..., 2:], b[..., 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    union = area_a + area_b - inter
    iou = inter / union.clamp(min=1e-7)
    lt2, rb2 = torch.minimum(a[..., :2], b[..., :2]), torch.maximum(a[..., 2:], b[..., 2:])
    hull = (rb2 - lt2).clamp(min=0).prod(-1)
    return iou - (hull - union) / hull.clamp(min=1e-7), iou


def linear_sum_assignment(cost):
    """scipy's when present; else a plain Hungarian (rows <= columns) for the small matrices here."""
    try:
        from scipy.optimize import linear_sum_assignment as lsa
        return lsa(cost)
    except ImportError:
        pass
    import numpy as np
    n, m = cost.shape
    u, v, p, way = np.zeros(n + 1), np.zeros(m + 1), np.zeros(m + 1, int), np.zeros(m + 1, int)
    for i in range(1, n + 1):
        p[0], j0 = i, 0
        minv, used = np.full(m + 1, np.inf), np.zeros(m + 1, bool)
        while True:
            used[j0] = True
            i0 = p[j0]
            cur = cost[i0 - 1] - u[i0] - v[1:]
            upd = ~used[1:] & (cur < minv[1:])
            minv[1:][upd], way[1:][upd] = cur[upd], j0
            cand = np.where(used[1:], np.inf, minv[1:])
            j1 = int(cand.argmin()) + 1
            delta = cand[j1 - 1]
            u[p[used]] += delta
            v[used] -= delta
            minv[~used] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    rows = [p[j] - 1 for j in range(1, m + 1) if p[j]]
    cols = [j - 1 for j in range(1, m + 1) if p[j]]
    order = sorted(range(len(rows)), key=lambda k: rows[k])
    return [rows[k] for k in order], [cols[k] for k in order]


@torch.no_grad()
def match(logits, boxes, tboxes, tvalid):
    """Hungarian matching per query as BinaryHungarianMatcherV2 (focal: cost_class 2, cost_bbox 5, cost_giou 2).
    logits [N,Q], boxes [N,Q,4] cxcywh, tboxes [N,T,4], tvalid [N,T] (valid targets first) -> (batch, query,
    target) index tensors."""
    p = logits.float().sigmoid()
    neg = 0.75 * p ** 2 * -(1 - p + 1e-8).log()
    pos = 0.25 * (1 - p) ** 2 * -(p + 1e-8).log()
    cost = 2 * (pos - neg).unsqueeze(-1) + 5 * (boxes.float().unsqueeze(2) - tboxes.unsqueeze(1)).abs().sum(-1)
    g, _ = giou_pairs(xyxy(boxes.float()).unsqueeze(2), xyxy(tboxes).unsqueeze(1))
    cost = torch.nan_to_num(cost - 2 * g, nan=1e6, posinf=1e6, neginf=-1e6).cpu().numpy()
    counts = tvalid.sum(1).tolist()
    bi, qi, ti = [], [], []
    for b, n in enumerate(counts):
        if n:
            r, c = linear_sum_assignment(cost[b, :, :n])
            bi += [b] * len(r)
            qi += list(r)
            ti += list(c)
    d = logits.device
    return (torch.tensor(bi, dtype=torch.long, device=d), torch.tensor(qi, dtype=torch.long, device=d),
            torch.tensor(ti, dtype=torch.long, device=d))


def focal(logits, target, alpha=0.25, gamma=2.0):
    p = logits.sigmoid()
    ce = F.binary_cross_entropy_with_logits(logits, target, reduction="none")
    p_t = p * target + (1 - p) * (1 - target)
    return (alpha * target + (1 - alpha) * (1 - target)) * ce * (1 - p_t) ** gamma


def detection_loss(out, tmasks, tvalid, iou_aware=False):
    """SAM 3's find loss over the final and the auxiliary decoder layers; tmasks [N,T,s,s] (soft, at the mask
    head's size), tvalid [N,T]. A matched query's score target is 1, or with iou_aware Meta's p^0.25 x IoU^0.75
    (which holds every score under 0.5 while the boxes are still poor: the first 6-minute run on the H100 ended with
    no detection at all). Returns (total, parts dict of floats)."""
    tboxes = mask_boxes(tmasks > 0.5)
    has = tvalid.any(1).float()  # phrases with at least one instance
    num = max(float(tvalid.sum()), 1.0)
    layers = [out] + list(out.get("aux_outputs", []))
    total, parts = 0.0, dict(ce=0.0, presence=0.0, l1=0.0, giou=0.0, mask=0.0, dice=0.0)
    for li, o in enumerate(layers):
        logits = o["pred_logits"][..., 0].float()
        boxes = o["pred_boxes"].float()
        b, q, t = match(logits, boxes, tboxes, tvalid)
        prob = logits.sigmoid()
        target = torch.zeros_like(logits)
        target[b, q] = 1.0
        g, iou = giou_pairs(xyxy(boxes[b, q]), xyxy(tboxes[b, t]))
        with torch.no_grad():  # IABCEMdetr: the positive's target is p^0.25 * IoU^0.75
            soft = target.clone()
            if iou_aware:
                soft[b, q] = (prob[b, q] ** 0.25 * iou.clamp(min=0) ** 0.75).clamp(min=0.01)
        ce = 10.0 * F.binary_cross_entropy_with_logits(logits, soft, reduction="none") * target
        ce = ce + F.binary_cross_entropy_with_logits(logits, target, reduction="none") * (1 - target) * prob ** 2
        ce = (ce * has.view(-1, 1)).mean()  # no score loss for a phrase with no instance (presence decides)
        pres = 0.5 * F.binary_cross_entropy_with_logits(o["presence_logit_dec"].float().view(-1), has)
        l1 = (boxes[b, q] - tboxes[b, t]).abs().sum() / num
        gl = (1 - g).sum() / num
        total = total + 20 * ce + 20 * pres + 5 * l1 + 2 * gl
        if li == 0:
            for k, v in (("ce", ce), ("presence", pres), ("l1", l1), ("giou", gl)):
                parts[k] = v.item()
            if b.numel():
                pm = o["pred_masks"][b, q].float()
                tm = tmasks[b, t]
                fm = focal(pm, tm).flatten(1).mean(1).sum() / num
                pr = pm.sigmoid().flatten(1)
                tt = tm.flatten(1)
                dice = (1 - (2 * (pr * tt).sum(1) + 1) / (pr.sum(1) + tt.sum(1) + 1)).sum() / num
                total = total + 200 * fm + 10 * dice
                parts["mask"], parts["dice"] = fm.item(), dice.item()
    return total, parts
