"""Network failures as Chinese sentences: ``NetError`` (a ``ToolError`` with ``kind``, ``url``,
``status``, ``response``) and the words for HTTP statuses, timeouts and a machine without network.
Part of ``xlakit.http`` (its module docstring lists the kinds)."""
import errno

from ..errors import ToolError

_STATUS_CN = {
    400: "请求有误", 401: "需要登录或授权", 402: "需要付费", 403: "拒绝访问（可能需要登录，或被网站的反爬限制拦下）",
    404: "页面不存在", 405: "不接受这种请求方式", 406: "无法提供可接受的内容", 407: "代理需要认证",
    408: "服务器等待请求超时", 409: "请求冲突", 410: "页面已被删除", 412: "前提条件不满足",
    413: "请求内容太大", 414: "网址太长", 415: "不支持的内容类型", 418: "拒绝服务（反爬）",
    421: "请求被发到了错误的服务器", 429: "请求太频繁，被网站限流",
    451: "因法律原因不可访问", 500: "服务器内部错误", 501: "服务器不支持该功能", 502: "网关错误（上游服务器无响应）",
    503: "服务暂时不可用（维护或过载）", 504: "网关超时", 520: "服务器返回了未知错误", 521: "源站已关闭",
    522: "连接源站超时", 523: "源站不可达", 524: "源站响应超时",
}


def status_text(status):
    """Chinese words for an HTTP status (``404`` -> ``页面不存在``)."""
    if status in _STATUS_CN:
        return _STATUS_CN[status]
    if 400 <= status < 500:
        return "请求被网站拒绝"
    if status >= 500:
        return "服务器出错"
    return "非预期的状态"


class NetError(ToolError):
    """A network failure in Chinese. ``kind`` says which (see the module docstring), ``url`` the
    address asked for, ``status`` the HTTP status for ``kind == "http"`` (with ``response`` the
    whole answer, so a caller can still look at an error page)."""

    def __init__(self, message, kind, url=None, status=None, response=None, **extra):
        super().__init__(message, **extra)
        self.kind = kind
        self.url = url
        self.status = status
        self.response = response


def _fmt_bytes(n):
    if n >= 1024 * 1024:
        return "%.1f MB" % (n / 1024.0 / 1024.0)
    if n >= 1024:
        return "%d KB" % (n // 1024)
    return "%d 字节" % n


_OFFLINE_ERRNOS = {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN, 10051, 10065, 10050}
_REFUSED_ERRNOS = {errno.ECONNREFUSED, 10061}
_RESET_ERRNOS = {errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED, 10053, 10054}


def _offline_error(url, detail):
    return NetError("无法联网：本机现在没有可用的网络（%s）。请检查网线、Wi-Fi 或代理软件后再试" % detail,
                    "offline", url)


def _timeout_error(url, host, seconds, budget_spent=False, detail=None):
    """The Chinese timeout sentence; ``detail`` says what was slow and what had arrived."""
    why = "：%s" % detail if detail else ""
    if budget_spent:
        return NetError("时间用完了：访问 %s 时已到本次调用的时间上限，没有等到完整的回应%s。网络较慢时请稍后重试" % (host, why),
                        "timeout", url)
    return NetError("访问 %s 超时（%.0f 秒内没有完成%s）：网络很慢或网站没有响应。请稍后重试，或换一个来源" % (
        host, max(1, seconds), why), "timeout", url)
