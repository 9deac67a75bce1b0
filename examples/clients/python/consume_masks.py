#!/usr/bin/env python3
"""Read samstream's mask topic, decode one object's mask with pycocotools and draw it into a PNG.

    python consume_masks.py --bootstrap 127.0.0.1:9092 --stream cam-1 --object 1 --out mask.png
    python consume_masks.py --bootstrap 127.0.0.1:9092 --stream cam-1 --frame-image frame.png --out overlay.png
    python consume_masks.py --check ../testdata/mask-record.json 1 ../testdata/object-1.txt

A mask record (docs/schema/mask-record.schema.json) is UTF-8 JSON, key = stream id, header samstream.schema
= "1" or "2". Each object's mask is COCO compressed RLE: {"size": [h, w], "counts": "..."}, which
pycocotools.mask.decode turns into an h x w uint8 array. --check decodes a record from a file (no Kafka) and
compares the mask with the expected pixels ('#' set, '.' not), the same file samstream's Java test checks its
own decoder against.
"""
import argparse
import json
import sys
import time

READABLE_SCHEMAS = {"1", "2"}


def decode(obj):
    """The object's mask as an h x w numpy array of 0/1 (pycocotools reads the compressed counts as bytes)."""
    from pycocotools import mask as mask_utils

    rle = {"size": obj["mask"]["size"], "counts": obj["mask"]["counts"].encode("ascii")}
    return mask_utils.decode(rle)


def pick(record, object_id):
    """The object with this id (the first one when None), or None."""
    for obj in record["objects"]:
        if object_id is None or obj["id"] == object_id:
            return obj
    return None


def draw(mask, frame_image=None, colour=(255, 64, 32)):
    """The mask in colour over the frame (half transparent), or white on black without one: a PIL image."""
    import numpy as np
    from PIL import Image

    h, w = mask.shape
    if frame_image is None:
        return Image.fromarray((mask * 255).astype(np.uint8), mode="L")
    frame = np.asarray(Image.open(frame_image).convert("RGB"), dtype=np.float32)
    if frame.shape[:2] != (h, w):
        raise SystemExit(f"{frame_image} is {frame.shape[1]}x{frame.shape[0]}, the record's frame {w}x{h}")
    inside = mask.astype(bool)
    frame[inside] = 0.5 * frame[inside] + 0.5 * np.array(colour, dtype=np.float32)
    return Image.fromarray(frame.astype(np.uint8), mode="RGB")


def check(record_file, object_id, expected_file):
    """Decodes the record's object and compares it with the expected pixels; exit 0 when equal."""
    import numpy as np

    with open(record_file, encoding="utf-8") as f:
        record = json.load(f)
    obj = pick(record, object_id)
    if obj is None:
        raise SystemExit(f"{record_file}: no object {object_id}")
    with open(expected_file, encoding="ascii") as f:
        expected = np.array([[c == "#" for c in line.rstrip("\n")] for line in f if line.strip()], dtype=np.uint8)
    got = decode(obj)
    if got.shape != expected.shape or not (got == expected).all():
        diff = int((got != expected).sum()) if got.shape == expected.shape else "shape"
        raise SystemExit(f"object {object_id}: the decoded mask differs from {expected_file} ({diff} pixels)")
    if int(got.sum()) != obj["area"]:
        raise SystemExit(f"object {object_id}: {int(got.sum())} pixels, the record says area {obj['area']}")
    print(f"object {object_id}: {got.shape[1]}x{got.shape[0]}, {obj['area']} pixels, as expected")


def consume(args):
    from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, TopicPartition

    # librdkafka wants a group id; with assign() and no commits the group holds nothing.
    consumer = Consumer({"bootstrap.servers": args.bootstrap, "group.id": "samstream-example",
                         "enable.auto.commit": False})
    try:
        topic = consumer.list_topics(args.topic, timeout=10).topics.get(args.topic)
        if topic is None or topic.error is not None or not topic.partitions:
            raise SystemExit(f"topic {args.topic} does not exist on {args.bootstrap}")
        start = OFFSET_BEGINNING if args.from_beginning else OFFSET_END
        consumer.assign([TopicPartition(args.topic, p, start) for p in sorted(topic.partitions)])
        deadline = time.monotonic() + args.timeout
        while time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None:
                continue
            if message.error():
                print(f"kafka: {message.error()}", file=sys.stderr)
                continue
            deadline = time.monotonic() + args.timeout
            headers = dict(message.headers() or [])
            version = (headers.get("samstream.schema") or b"1").decode()
            if version not in READABLE_SCHEMAS or message.value() is None:
                continue
            record = json.loads(message.value())
            if args.stream and record["stream"] != args.stream:
                continue
            engine = headers.get("samstream.engine")
            print(f"{record['stream']} frame {record['frame']}" + (f" (engine {engine.decode()})" if engine else "")
                  + ": " + ", ".join(f"object {o['id']} area {o['area']}" for o in record["objects"]))
            obj = pick(record, args.object)
            if obj is None:
                continue
            draw(decode(obj), args.frame_image).save(args.out)
            print(f"wrote {args.out}: object {obj['id']} of frame {record['frame']}")
            return 0
    finally:
        consumer.close()
    print(f"no record with the object within {args.timeout} s", file=sys.stderr)
    return 1


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bootstrap", help="Kafka brokers, host:port")
    p.add_argument("--topic", default="samstream.masks", help="the mask topic (default: %(default)s)")
    p.add_argument("--stream", help="only this stream's records")
    p.add_argument("--object", type=int, help="the object to draw (default: the first of the record)")
    p.add_argument("--frame-image", help="draw over this image of the frame (same size) instead of black")
    p.add_argument("--out", default="mask.png", help="the PNG to write (default: %(default)s)")
    p.add_argument("--from-beginning", action="store_true", help="start at the oldest record, not at the end")
    p.add_argument("--timeout", type=int, default=60, help="give up after this many seconds without a record")
    p.add_argument("--check", nargs=3, metavar=("RECORD.json", "OBJECT", "EXPECTED.txt"),
                   help="decode an object of a record file and compare it with expected pixels; no Kafka")
    args = p.parse_args()
    if args.check:
        check(args.check[0], int(args.check[1]), args.check[2])
        return 0
    if not args.bootstrap:
        p.error("--bootstrap is needed (or --check)")
    return consume(args)


if __name__ == "__main__":
    sys.exit(main())
