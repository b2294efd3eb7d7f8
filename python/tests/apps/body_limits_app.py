"""Request body limits at each level (app, router, inclusion, route, mounted app), served
by `vireo serve` in tests/test_body_limits.py."""

from vireo import APIRouter, App, Request

app = App(max_body_size=1000)
# Past the server's own default (2 MiB), which a route's limit replaces.
uploads = APIRouter(prefix="/uploads", max_body_size=3 * 1024 * 1024)


async def size(request: Request) -> dict[str, int]:
    return {"size": len(await request.body())}


app.post("/items")(size)
uploads.post("/")(size)
uploads.post("/small", max_body_size=10)(size)
app.include_router(uploads)
# A router that sets no limit takes its inclusion's.
plain = APIRouter()
plain.post("/")(size)
app.include_router(plain, prefix="/v2", max_body_size=50)

# A mounted app that sets no limit has this app's.
mounted = App()
mounted.post("/echo")(size)
app.mount("/sub", mounted)
