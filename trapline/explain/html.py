"""`trapline explain ... --html FILE`: one self-contained page of an explanation document.

The page is made from the same document as the text and the JSON (document.py), and carries it
whole (a <script type="application/json" id="trapline-doc">), so a test, a notebook or a browser
check can compare what the page shows with the data. Nothing is fetched: the styles, the SVG
and the script are in the page. Each item kind has its form:
  text      a paragraph;  insn  a row of a listing table;  register  a row of a table;
  bytes     an SVG of the bytes before and after, the changed ones marked;
  event     a timeline entry, a lost hit marked;
  area      an SVG bar per mapped area, labelled as /proc/PID/maps;
  row       a table per kind of row (html_rows.py), an emulation's stack words drawn as SVG;
  step      a step-through: buttons and the arrow keys move through the hit, each step showing
            the instruction run, where it is, and what it changed (registers, the flags that
            changed by name, the watched word, the stack and memory words) as an SVG board; the whole list is below with the current step marked.
The same document gives the same bytes (no time, no randomness, sorted JSON).
"""
from __future__ import annotations

import json
from html import escape

from .document import spaced

BOX, GAP = 28, 4                    # an SVG byte box and the space between boxes

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;color:#222}
h1{font-size:1.3em}h2{font-size:1.05em;margin-top:1.6em;border-bottom:1px solid #ccc}
pre,code,td.mono,.mono{font-family:ui-monospace,monospace;font-size:12.5px}
p.text{white-space:pre-wrap;margin:.25em 0}
table{border-collapse:collapse;margin:.4em 0}td{padding:1px 8px;vertical-align:top}
table.listing tr:nth-child(odd),table.rows tr:nth-child(even){background:#f6f6f6}
table.rows th{text-align:left;font-weight:normal;color:#666;font-size:.85em}
ol.timeline{padding-left:1.2em}ol.timeline li.lost{background:#fde2e2;font-weight:bold}
.chip{display:inline-block;padding:0 4px;border-radius:3px;background:#eee;font-family:monospace}
.stepper{border:1px solid #999;border-radius:6px;padding:.6em;margin:.6em 0}
.stepper:focus{outline:2px solid #36c}
.stepper button{font-size:1em;margin-right:.4em}
.stepper tr.current{background:#d8e8ff}
svg text{font-family:ui-monospace,monospace;font-size:12px}
"""

SCRIPT = """
(function(){
  function hex(v){return '0x'+BigInt(v).toString(16);}
  // the status and control flags of EFLAGS that changed (Intel SDM vol. 1 3.4.3)
  var FLAGS=[['CF',0],['PF',2],['AF',4],['ZF',6],['SF',7],['TF',8],['IF',9],['DF',10],['OF',11]];
  function flags(a,b){return FLAGS.filter(function(f){return ((a>>f[1])&1)!==((b>>f[1])&1);})
    .map(function(f){return f[0]+(((b>>f[1])&1)?'=1':'=0');}).join(' ');}
  function board(svg, step){
    var rows=step.changes, h=24*(rows.length+1);
    svg.setAttribute('height', String(h));
    svg.setAttribute('viewBox','0 0 760 '+h);
    while(svg.firstChild){svg.removeChild(svg.firstChild);}
    var ns='http://www.w3.org/2000/svg';
    function t(x,y,s,cls){var e=document.createElementNS(ns,'text');e.setAttribute('x',x);
      e.setAttribute('y',y);if(cls){e.setAttribute('class',cls);}e.textContent=s;svg.appendChild(e);}
    if(!rows.length){t(4,16,step.last?'back in the original code: the hit is over':'no register changed');return;}
    t(4,16,'changed');
    rows.forEach(function(c,i){var y=24*(i+1);
      var r=document.createElementNS(ns,'rect');r.setAttribute('x',0);r.setAttribute('y',y+2);
      r.setAttribute('width',760);r.setAttribute('height',22);r.setAttribute('fill','#fff4cc');
      svg.appendChild(r);t(4,y+17,c.name);t(160,y+17,hex(c.before));t(400,y+17,'-> '+hex(c.after));
      if(c.name==='eflags'||c.name==='rflags'){t(540,y+17,flags(c.before,c.after));}});
  }
  function show(el, k){
    var steps=JSON.parse(el.getAttribute('data-steps'));
    k=Math.max(0,Math.min(steps.length-1,k));el.setAttribute('data-current',String(k));
    var s=steps[k];
    el.querySelector('.where').textContent='step '+s.n+' of '+steps.length+'  tid '+s.tid+'  '+
      hex(s.address)+(s.where?' <'+s.where+'>':'')+': '+s.asm;
    board(el.querySelector('svg.board'), s);
    el.querySelectorAll('tr.step').forEach(function(tr,i){tr.className=i===k?'step current':'step';});
  }
  var steppers=document.querySelectorAll('.stepper'), active=steppers[0]||null;
  steppers.forEach(function(el){
    show(el,0);
    el.addEventListener('focus',function(){active=el;});
    el.querySelector('.prev').addEventListener('click',function(){active=el;show(el,+el.getAttribute('data-current')-1);});
    el.querySelector('.next').addEventListener('click',function(){active=el;show(el,+el.getAttribute('data-current')+1);});
  });
  document.addEventListener('keydown',function(e){
    if(!active){return;}
    if(e.key==='ArrowRight'){show(active,+active.getAttribute('data-current')+1);e.preventDefault();}
    if(e.key==='ArrowLeft'){show(active,+active.getAttribute('data-current')-1);e.preventDefault();}
  });
})();
"""


def render_html(doc: dict) -> str:
    body = [f"<h1>{escape(doc['title'])}</h1>",
            f"<p class=\"meta\">trapline explain: {escape(doc['technique'])}, {escape(doc['arch'])}</p>"]
    for number, section in enumerate(doc["sections"]):
        body.append(f"<section id=\"s{number}\">")
        if section["title"] is not None:
            body.append(f"<h2>{escape(section['title'])}</h2>")
        body += _items(section["items"], number)
        body.append("</section>")
    data = json.dumps(doc, sort_keys=True, ensure_ascii=True).replace("</", "<\\/")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(doc['title'])}</title><style>{STYLE}</style></head>\n<body>\n"
            + "\n".join(body)
            + f"\n<script type=\"application/json\" id=\"trapline-doc\">{data}</script>\n"
            f"<script>{SCRIPT}</script>\n</body></html>\n")


def _items(items: list[dict], section: int) -> list[str]:
    """Consecutive items of one kind go together (a listing, a timeline, a step-through)."""
    out, run = [], []
    for item in items + [{"kind": None}]:
        if run and item["kind"] != run[0]["kind"]:
            out += _group(run, section, len(out))
            run = []
        if item["kind"] is not None:
            run.append(item)
    return out


def _group(run: list[dict], section: int, index: int) -> list[str]:
    kind = run[0]["kind"]
    if kind == "text":
        return [f"<p class=\"text\">{escape(i['text'])}</p>" for i in run]
    if kind == "insn":
        rows = "".join(f"<tr><td class=\"mono\">{i['address']:#x}</td><td class=\"mono\">"
                       f"{spaced(i['bytes'])}</td><td class=\"mono\">{escape(i['asm'])}</td>"
                       f"<td>{escape(i['note'])}</td></tr>" for i in run)
        return [f"<table class=\"listing\">{rows}</table>"]
    if kind == "register":
        rows = "".join(f"<tr><td class=\"mono\">{escape(i['name'])}</td><td class=\"mono\">"
                       f"{i['before']:#x} -&gt; {i['after']:#x}</td><td>{escape(i['note'])}</td></tr>"
                       for i in run)
        return [f"<table class=\"registers\">{rows}</table>"]
    if kind == "bytes":
        return [_bytes_figure(i) for i in run]
    if kind == "event":
        return ["<ol class=\"timeline\">" + "".join(_event(i) for i in run) + "</ol>"]
    if kind == "step":
        return [_stepper(run, f"stepper-{section}-{index}")]
    if kind == "area":
        return [_areas(run)]
    if kind == "row":
        from .html_rows import rows_html
        return rows_html(run)
    raise ValueError(f"unknown item kind {kind!r}")


def _bytes_figure(item: dict) -> str:
    before, after = bytes.fromhex(item["before"]), bytes.fromhex(item["after"])
    width = max(len(before), len(after), 1) * (BOX + GAP) + 70
    parts = [f"<svg class=\"bytes\" width=\"{width}\" height=\"{2 * BOX + 14}\" "
             f"viewBox=\"0 0 {width} {2 * BOX + 14}\" xmlns=\"http://www.w3.org/2000/svg\">"]
    for row, (label, data) in enumerate((("before", before), ("after", after))):
        y = row * (BOX + 6)
        parts.append(f"<text x=\"0\" y=\"{y + 18}\">{label}</text>")
        for n, value in enumerate(data):
            other = after if row == 0 else before
            changed = n >= len(other) or other[n] != value
            x = 60 + n * (BOX + GAP)
            fill = "#ffd6d6" if changed else "#e8f0e8"
            parts.append(f"<rect x=\"{x}\" y=\"{y}\" width=\"{BOX}\" height=\"{BOX}\" "
                         f"fill=\"{fill}\" stroke=\"#666\"/><text x=\"{x + 6}\" y=\"{y + 18}\">"
                         f"{value:02x}</text>")
    parts.append("</svg>")
    caption = f"{item['address']:#x}" + (f": {escape(item['note'])}" if item["note"] else "")
    return f"<figure>{''.join(parts)}<figcaption class=\"mono\">{caption}</figcaption></figure>"


def _areas(run: list[dict]) -> str:
    """The areas as bars, lowest address first, each labelled as /proc/PID/maps would."""
    rows = sorted(run, key=lambda a: a["start"])
    height = 30 * len(rows) + 4
    parts = [f"<svg class=\"areas\" width=\"760\" height=\"{height}\" viewBox=\"0 0 760 {height}\" "
             "xmlns=\"http://www.w3.org/2000/svg\">"]
    for n, a in enumerate(rows):
        y = 30 * n + 2
        fill = "#dfe9f7" if "x" in a["perms"] else "#eeeeee"
        parts.append(f"<rect x=\"0\" y=\"{y}\" width=\"756\" height=\"26\" fill=\"{fill}\" "
                     f"stroke=\"#666\"/><text x=\"6\" y=\"{y + 17}\">{a['start']:08x}-{a['end']:08x} "
                     f"{escape(a['perms'])} {escape(a['name'])}</text>")
        if a["note"]:
            parts.append(f"<title>{escape(a['note'])}</title>")
    parts.append("</svg>")
    notes = "; ".join(escape(a["note"]) for a in rows if a["note"])
    return f"<figure>{''.join(parts)}<figcaption>{notes}</figcaption></figure>"


def _event(item: dict) -> str:
    who = f"tid {item['tid']}" if item["tid"] is not None else "tool"
    site = (f" <span class=\"chip\">site {spaced(item['site_bytes'])}</span>"
            if item["site_bytes"] is not None else "")
    lost = " LOST: no probe saw this execution" if item["lost"] else ""
    cls = " class=\"lost\"" if item["lost"] else ""
    return f"<li{cls}><span class=\"mono\">t={item['at']}</span> {who}: {escape(item['what'])}{site}{lost}</li>"


def _stepper(steps: list[dict], ident: str) -> str:
    data = escape(json.dumps(steps, sort_keys=True, ensure_ascii=True), quote=True)
    rows = "".join(f"<tr class=\"step\"><td>{s['n']}</td><td class=\"mono\">{s['address']:#x}</td>"
                   f"<td>{escape(s['where'])}</td><td class=\"mono\">{escape(s['asm'])}</td>"
                   f"<td class=\"mono\">{escape(_changes(s))}</td></tr>" for s in steps)
    return (f"<div class=\"stepper\" id=\"{ident}\" tabindex=\"0\" data-current=\"0\" "
            f"data-steps=\"{data}\"><button class=\"prev\" type=\"button\">&#9664; previous</button>"
            "<button class=\"next\" type=\"button\">next &#9654;</button> "
            "<span>(or the arrow keys)</span><p class=\"where mono\"></p>"
            "<svg class=\"board\" width=\"760\" height=\"24\" xmlns=\"http://www.w3.org/2000/svg\">"
            f"</svg><table class=\"steps\">{rows}</table></div>")


def _changes(step: dict) -> str:
    return ", ".join(f"{c['name']} {c['before']:#x} -> {c['after']:#x}" for c in step["changes"])
