"""A one-file Django project for the differential tests: `diff_django:asgi_app` (ASGI) and
`diff_django:wsgi_app` (WSGI) are the same project."""

from django.conf import settings

settings.configure(
    DEBUG=False,
    SECRET_KEY="differential-tests-only",
    ROOT_URLCONF=__name__,
    ALLOWED_HOSTS=["example.test"],
    MIDDLEWARE=["django.middleware.common.CommonMiddleware"],
    INSTALLED_APPS=[],
    DATABASES={},
    USE_TZ=True,
)

from django.core.asgi import get_asgi_application  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import HttpResponse, HttpResponseRedirect, JsonResponse, StreamingHttpResponse  # noqa: E402
from django.urls import path  # noqa: E402
from django.views.decorators.csrf import csrf_exempt  # noqa: E402


def home(request):
    return HttpResponse(f"hello {request.GET.get('who', 'world')}", content_type="text/plain")


def query(request):
    return JsonResponse({k: request.GET.getlist(k) for k in sorted(request.GET)})


@csrf_exempt
def echo(request):
    body = request.body
    return JsonResponse({"method": request.method, "length": len(body), "sum": sum(body) % 65521,
                         "type": request.content_type})


def cookies(request):
    res = JsonResponse({"seen": dict(sorted(request.COOKIES.items()))})
    res.set_cookie("a", "1", httponly=True)
    res.set_cookie("b", "2", path="/x")
    return res


def stream(request):
    return StreamingHttpResponse((f"row {i}\n" for i in range(4)), content_type="text/plain")


def redirect(request):
    return HttpResponseRedirect("/query/?from=redirect")


def fail(request):
    raise RuntimeError("django failure")


def meta(request):
    return JsonResponse({"path": request.path, "path_info": request.path_info,
                         "script_name": request.META.get("SCRIPT_NAME"),
                         "host": request.get_host(), "secure": request.is_secure(),
                         "multi": request.headers.get("X-Multi")})


urlpatterns = [
    path("", home),
    path("query/", query),
    path("echo/", echo),
    path("cookies/", cookies),
    path("stream/", stream),
    path("redirect/", redirect),
    path("fail/", fail),
    path("meta/", meta),
]

asgi_app = get_asgi_application()
wsgi_app = get_wsgi_application()
