from http_api.declare import op
from http_api.routing import Call, Reply
from service.common import health
from service.common.health import Health


def get_health(call: Call) -> Reply:
    report = health.report()
    return Reply(report, status=200 if report.status == "ok" else 503)


OPERATIONS = [
    op("GET", "/health", get_health, summary="Health of the API, its database and its queue", tag="Health",
       operation_id="getHealth", auth=False, answer=Health, errors=(503,), transaction="none",
       description="503 with the failing part `down`. No authentication."),
]
