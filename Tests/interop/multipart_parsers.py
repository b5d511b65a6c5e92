#!/usr/bin/env python3
"""Parses multipart/form-data bodies with four independent Python parsers.

Usage: multipart_parsers.py MANIFEST.json

The manifest is a JSON list of cases:
  {"body": "/path/to/body", "boundary": "...",
   "parts": [{"name": str, "filename": str or null, "content_type": str or null,
              "data": base64}]}
Names and file names are given as they appear on the wire, after browser (WHATWG) escaping.
python-multipart and streaming-form-data return them so; multipart and Werkzeug undo the
escaping (`%22` -> `"`, `%0D` -> CR, `%0A` -> LF), as a server for browsers must, so they are
expected to return the unescaped form (Werkzeug undoes `%22` only). Field parts (no file name) hold UTF-8 text, as
browsers send; file parts hold any bytes.

Backslashes are not part of the generated names: browsers send them literally and so does
Courier, while Werkzeug and streaming-form-data read them as RFC 822 quoted-pair escapes and
python-multipart and multipart keep only the last `\`-separated component of a file name.

Every case goes through python-multipart, multipart, streaming-form-data and Werkzeug.
Exits 0 only when all four return exactly the expected parts, in order where the parser
keeps order; otherwise prints each disagreement and exits 1.
"""

import base64
import io
import json
import sys


def parse_python_multipart(body, boundary):
    from python_multipart.multipart import MultipartParser, parse_options_header

    parts = []
    state = {"headers": [], "field": b"", "value": b"", "data": bytearray()}

    def on_part_begin():
        state["headers"] = []
        state["data"] = bytearray()

    def on_part_data(data, start, end):
        state["data"] += data[start:end]

    def on_header_field(data, start, end):
        state["field"] += data[start:end]

    def on_header_value(data, start, end):
        state["value"] += data[start:end]

    def on_header_end():
        state["headers"].append((state["field"].decode("latin-1"), state["value"]))
        state["field"], state["value"] = b"", b""

    def on_part_end():
        headers = {name.lower(): value for name, value in state["headers"]}
        _, options = parse_options_header(headers.get("content-disposition", b""))
        filename = options.get(b"filename")
        content_type = headers.get("content-type")
        parts.append({
            "name": options.get(b"name", b"").decode("utf-8"),
            "filename": filename.decode("utf-8") if filename is not None else None,
            "content_type": content_type.decode("utf-8") if content_type is not None else None,
            "data": bytes(state["data"]),
        })

    callbacks = {
        "on_part_begin": on_part_begin, "on_part_data": on_part_data, "on_part_end": on_part_end,
        "on_header_field": on_header_field, "on_header_value": on_header_value, "on_header_end": on_header_end,
    }
    parser = MultipartParser(boundary.encode("latin-1"), callbacks, max_header_count=32, max_header_size=1 << 16)
    # Uneven feeding, as a network delivers bytes.
    offset, step = 0, 1
    while offset < len(body):
        parser.write(body[offset:offset + step])
        offset += step
        step = step * 5 + 3
    parser.finalize()
    return parts


def parse_multipart(body, boundary):
    import multipart

    parser = multipart.MultipartParser(
        io.BytesIO(body), boundary, content_length=len(body), charset="utf8", strict=True,
        header_limit=32, headersize_limit=1 << 16, part_limit=1 << 16,
        memory_limit=1 << 32, spool_limit=1 << 32)
    parts = []
    for part in parser:
        parts.append({
            "name": part.name,
            "filename": part.filename,
            "content_type": part.headerlist and dict((k.lower(), v) for k, v in part.headerlist).get("content-type"),
            "data": part.raw,
        })
    return parts


def parse_streaming_form_data(body, boundary, expected):
    from streaming_form_data import StreamingFormDataParser
    from streaming_form_data.targets import ValueTarget

    parser = StreamingFormDataParser(headers={"Content-Type": f'multipart/form-data; boundary="{boundary}"'})
    targets = []
    for part in expected:
        target = ValueTarget()
        parser.register(part["name"], target)
        targets.append(target)
    offset, step = 0, 7
    while offset < len(body):
        parser.data_received(body[offset:offset + step])
        offset += step
        step = step * 3 + 1
    parts = []
    for part, target in zip(expected, targets):
        parts.append({
            "name": part["name"],
            "filename": target.multipart_filename,
            "content_type": target.multipart_content_type,
            "data": target.value,
        })
    return parts


def parse_werkzeug(body, boundary):
    from werkzeug.formparser import MultiPartParser

    parser = MultiPartParser(max_form_parts=1 << 16)
    form, files = parser.parse(io.BytesIO(body), boundary.encode("latin-1"), len(body))
    parts = []
    for name, value in form.items(multi=True):
        parts.append({"name": name, "filename": None, "content_type": None, "data": value.encode("utf-8")})
    for name, storage in files.items(multi=True):
        parts.append({
            "name": name, "filename": storage.filename, "content_type": storage.headers.get("Content-Type"),
            "data": storage.read(),
        })
    return parts


def comparable(part, with_type=True):
    return (part["name"], part["filename"], part["content_type"] if with_type else None, part["data"])


ALL_ESCAPES = (("%22", '"'), ("%0D", "\r"), ("%0A", "\n"))
QUOTE_ESCAPE = (("%22", '"'),)


def unescaped(text, escapes):
    if text is None:
        return None
    for escape, character in escapes:
        text = text.replace(escape, character)
    return text


def unescaped_part(part, escapes):
    return dict(part, name=unescaped(part["name"], escapes), filename=unescaped(part["filename"], escapes))


def check(case):
    with open(case["body"], "rb") as handle:
        body = handle.read()
    boundary = case["boundary"]
    expected = [
        {"name": p["name"], "filename": p.get("filename"), "content_type": p.get("content_type"),
         "data": base64.b64decode(p["data"])}
        for p in case["parts"]
    ]
    failures = []
    runs = {
        "python-multipart": lambda: (parse_python_multipart(body, boundary), True, True, ()),
        "multipart": lambda: (parse_multipart(body, boundary), True, True, ALL_ESCAPES),
        "streaming-form-data": lambda: (parse_streaming_form_data(body, boundary, expected), True, True, ()),
        # Werkzeug returns fields and files in two dictionaries, so only the multiset is comparable,
        # and a field's Content-Type is not kept.
        "werkzeug": lambda: (parse_werkzeug(body, boundary), False, False, QUOTE_ESCAPE),
    }
    for parser_name, run in runs.items():
        try:
            parts, ordered, field_types, escapes = run()
        except Exception as error:  # a parser that rejects the body is a failure, reported as such
            failures.append(f"{parser_name}: raised {type(error).__name__}: {error}")
            continue
        wanted = [unescaped_part(p, escapes) for p in expected]
        want = [comparable(p, field_types or p["filename"] is not None) for p in wanted]
        got = [comparable(p, field_types or p["filename"] is not None) for p in parts]
        if not ordered:
            want, got = sorted(want, key=repr), sorted(got, key=repr)
        if want != got:
            for index, (w, g) in enumerate(zip(want, got)):
                if w != g:
                    failures.append(f"{parser_name}: part {index}: expected {summary(w)}, got {summary(g)}")
                    break
            if len(want) != len(got):
                failures.append(f"{parser_name}: expected {len(want)} parts, got {len(got)}")
    return failures


def summary(part):
    name, filename, content_type, data = part
    return f"(name={name!r}, filename={filename!r}, type={content_type!r}, {len(data)} bytes {data[:16]!r})"


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as handle:
        cases = json.load(handle)
    failed = 0
    for index, case in enumerate(cases):
        failures = check(case)
        if failures:
            failed += 1
            print(f"case {index} ({case['body']}):")
            for failure in failures:
                print("  " + failure)
    print(f"{len(cases) - failed} of {len(cases)} bodies parsed identically by all four parsers")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
