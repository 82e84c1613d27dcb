"""The pick bench's JavaScript tasks (node --test)."""

from __future__ import annotations

from benchmarks.pick_cases.model import NEW, Candidate, Change, PickCase

_HEAD = "'use strict'\n\nconst test = require('node:test')\nconst { createRFC9457Error } = require('..')\n\n"
_DEFAULTS = """test('toProblemDetails() with defaults', (t) => {
  const E = createRFC9457Error('CODE', 'oops')
  t.assert.deepStrictEqual(new E().toProblemDetails(), {
    type: 'about:blank',
    title: 'Internal Server Error',
    status: 500,
    detail: 'oops',
    instance: '',
    code: 'CODE',
    details: {}
  })
})
"""
_NOT_FOUND = """
test('the title is the status reason phrase', (t) => {
  const NotFound = createRFC9457Error('NOT_FOUND', 'user %s does not exist', 404)
  const pd = new NotFound('alice').toProblemDetails('/users/alice')
  t.assert.equal(pd.title, 'Not Found')
  t.assert.equal(pd.instance, '/users/alice')
  t.assert.equal(pd.detail, 'user alice does not exist')
})
"""
_CUSTOM = """
test('a custom type and title', (t) => {
  const W = createRFC9457Error('WARN', 'over by %d', 429, { type: 'https://example.net/warn', title: 'Warning' })
  const pd = new W(7).toProblemDetails('/limit', { retryAfter: 60 })
  t.assert.equal(pd.type, 'https://example.net/warn')
  t.assert.equal(pd.title, 'Warning')
  t.assert.deepStrictEqual(pd.details, { retryAfter: 60 })
})
"""
_OVERRIDDEN = """
test('an instance statusCode wins', (t) => {
  const E = createRFC9457Error('CODE', 'oops', 500)
  const e = new E()
  e.statusCode = 502
  t.assert.equal(e.toProblemDetails().status, 502)
})
"""
_UNKNOWN = """
test('an unknown status has a generic title', (t) => {
  const E = createRFC9457Error('WEIRD', 'unusual', 599)
  t.assert.equal(new E().toProblemDetails().title, 'Unknown Error')
})
"""
_INSTANCE = """
test('the instance and details are passed through', (t) => {
  const E = createRFC9457Error('CODE', 'oops')
  const pd = new E().toProblemDetails('/here', { a: 1 })
  t.assert.equal(pd.instance, '/here')
  t.assert.deepStrictEqual(pd.details, { a: 1 })
})
"""
_EXPORT = "module.exports.createRFC9457Error = createRFC9457Error\n"
_SPECIAL = """
function createRFC9457Error (code, message, statusCode = 500, opts = {}, Base = Error,
  captureStackTrace = createError.captureStackTrace) {
  const RFC9457Error = createError(code, message, statusCode, Base, captureStackTrace)
  RFC9457Error.prototype.toProblemDetails = function (instance = '', details = {}) {
    return {
      type: opts.type || 'about:blank',
      title: opts.title || 'Internal Server Error',
      status: this.statusCode ?? statusCode,
      detail: this.message,
      instance,
      code: this.code,
      details
    }
  }
  return RFC9457Error
}

createError.captureStackTrace = true
"""
_PARTIAL = """
function createRFC9457Error (code, message, statusCode = 500) {
  const RFC9457Error = createError(code, message, statusCode)
  RFC9457Error.prototype.toProblemDetails = function (instance = '', details = {}) {
    return {
      type: 'about:blank',
      title: STATUS_CODES[statusCode] || 'Unknown Error',
      status: statusCode,
      detail: this.message,
      instance,
      code: this.code,
      details
    }
  }
  return RFC9457Error
}

createError.captureStackTrace = true
"""
_TOP = ("'use strict'\n\nconst { format } = require('node:util')\n",
        "'use strict'\n\nconst { STATUS_CODES } = require('node:http')\nconst { format } = require('node:util')\n")
_OLD_END = ("\ncreateError.captureStackTrace = true\n", "")
_OLD_EXPORT = ("module.exports.createError = createError\n", "module.exports.createError = createError\n" + _EXPORT)

FASTIFY_ERROR = PickCase(
    case="@fastify/error 4.2.1 -> 4.3.0",
    requirement="createRFC9457Error(code, message, statusCode, opts): errors whose toProblemDetails(instance,"
                " details) returns an RFC 9457 problem details object",
    visible={"test/problem-details.test.js": _HEAD + _DEFAULTS},
    held_back=("test/index.test.js",),
    candidates=(
        Candidate("real", {"index.js": NEW}, {"test/problem-details-more.test.js": _HEAD + _NOT_FOUND.lstrip()
                                                                                     + _CUSTOM}),
        Candidate("alt", {"index.js": NEW},
                  {"test/problem-details-status.test.js": _HEAD + _OVERRIDDEN.lstrip() + _UNKNOWN}),
        Candidate("special", {"index.js": Change(edits=(_OLD_END, ("\nconst FastifyErrorConstructor",
                                                                    _SPECIAL + "\nconst FastifyErrorConstructor"),
                                                         _OLD_EXPORT))},
                  {"test/problem-details-custom.test.js": _HEAD + _CUSTOM.lstrip() + _INSTANCE},
                  "the title is the 500's reason phrase whatever the status"),
        Candidate("partial", {"index.js": Change(edits=(_TOP, _OLD_END, ("\nconst FastifyErrorConstructor",
                                                                          _PARTIAL + "\nconst FastifyErrorConstructor"),
                                                         _OLD_EXPORT))},
                  {"test/problem-details-status.test.js": _HEAD + _NOT_FOUND.lstrip() + _UNKNOWN},
                  "opts (type, title) and an instance's statusCode ignored"),
        Candidate("break", {"index.js": Change("new", (("return `${this.name} [${this.code}]: ${this.message}`",
                                                         "return `${this.name}: ${this.message}`"),))},
                  {"test/problem-details-more.test.js": _HEAD + _NOT_FOUND.lstrip() + _INSTANCE},
                  "the release's change, and toString without the code"),
    ),
)

_PA = ("'use strict'\n\nconst { test } = require('node:test')\nconst proxyaddr = require('..')\n\n"
       "function createReq (socketAddr, headers) {\n  return { socket: { remoteAddress: socketAddr }, headers }\n}\n")


def _untrusted(name: str, client: str, trust: str, forwarded: str = "6.6.6.6") -> str:
    """A proxyaddr test: `trust` must not trust `client`, so the address is the client's."""
    return (f"\ntest('{name}', function (t) {{\n"
            f"  const req = createReq('{client}', {{ 'x-forwarded-for': '{forwarded}' }})\n"
            f"  t.assert.strictEqual(proxyaddr(req, {trust}), '{client}')\n}})\n")


_SINGLE_CONVERT = "      // Convert IP to match subnet IP kind\n      ip = subnetisipv4\n"
_ALL_ADDRS = "  if (!trust) {\n    // Return all addresses\n    return addrs\n  }\n"

PROXY_ADDR = PickCase(
    case="@fastify/proxy-addr 5.1.0 -> 5.1.1",
    requirement="an IPv6 trust subnet spans IPv4 addresses only when it is an IPv4-mapped subnet whose prefix covers"
                " the ::ffff: marker (/96 or longer), alone or in a list; a native IPv6 address never matches an"
                " IPv4-mapped subnet",
    visible={"test/mapped-visible.test.js": _PA + _untrusted("a short mapped prefix trusts no IPv4", "1.1.1.1",
                                                              "'::ffff:10.0.0.0/8'")},
    held_back=("test/all.test.js",),
    candidates=(
        Candidate("real", {"index.js": NEW}, {"test/mapped-more.test.js": _PA + _untrusted(
            "zero leading bits trust no IPv4", "1.1.1.1", "'::/1'") + _untrusted(
            "a short mapped prefix in a list", "1.1.1.1", "['::ffff:10.0.0.0/8', '127.0.0.1']")}),
        Candidate("alt", {"index.js": NEW}, {"test/mapped-more.test.js": _PA + _untrusted(
            "native IPv6 against a mapped subnet", "2001:db8::1", "'::ffff:10.0.0.0/104'") + _untrusted(
            "native IPv6 against a mapped subnet in a list", "2001:db8::1", "['::ffff:10.0.0.0/104', 'fe80::/125']")}),
        Candidate("special", {"index.js": Change(edits=((_SINGLE_CONVERT, (
            "      if (!subnetisipv4 && subnetrange === 8) {\n        return false\n      }\n\n"
            + _SINGLE_CONVERT)),))},
                  {"test/mapped-more.test.js": _PA + _untrusted("another client", "3.3.3.3", "'::ffff:10.0.0.0/8'")
                   + _untrusted("another forwarded address", "1.1.1.1", "'::ffff:10.0.0.0/8'", "7.7.7.7")},
                  "a single IPv6 subnet of prefix 8 refused for IPv4; other short prefixes and lists still trusted"),
        Candidate("partial", {"index.js": Change(edits=((_SINGLE_CONVERT, (
            "      if (!subnetisipv4 && !(subnetrange >= 96 && subnetip.isIPv4MappedAddress())) {\n"
            "        return false\n      }\n\n" + _SINGLE_CONVERT)),))},
                  {"test/mapped-more.test.js": _PA + _untrusted("zero leading bits trust no IPv4", "1.1.1.1", "'::/1'")
                   + _untrusted("another client", "3.3.3.3", "'::ffff:10.0.0.0/8'")},
                  "the guard for a single subnet only: a list, and native IPv6 against a mapped subnet, unfixed"),
        Candidate("break", {"index.js": Change("new", ((_ALL_ADDRS, _ALL_ADDRS.replace("return addrs", "return addrs"
                                                                                          ".slice(0, 1)")),))},
                  {"test/mapped-more.test.js": _PA + _untrusted("zero leading bits trust no IPv4", "1.1.1.1", "'::/1'")
                   + _untrusted("a short mapped prefix in a list", "1.1.1.1", "['::ffff:10.0.0.0/8', '127.0.0.1']")},
                  "the release's fix, and proxyaddr.all without a trust returning the socket's address only"),
    ),
)

CASES = [FASTIFY_ERROR, PROXY_ADDR]
