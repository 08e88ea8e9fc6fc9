from http_api.declare import op
from http_api.routing import Call, Operation, Reply
from service.common import health
from service.common.health import Health, Readiness


def get_health(call: Call) -> Reply:
    report = health.report()
    return Reply(report, status=200 if report.status == "ok" else 503)


def get_readiness(call: Call) -> Reply:
    report = health.readiness()
    return Reply(report, status=200 if report.status == "ready" else 503)


def _ready() -> Operation:
    declared = op("GET", "/health/ready", get_readiness, summary="Whether this process is ready to serve",
                  tag="Health", operation_id="getReadiness", auth=False, answer=Readiness, transaction="none",
                  description="200 when the database and the queue answer; 503 with the same body, naming the "
                              "part that is `down`, while either does not. `GET /v1/health` is the liveness "
                              "check. No authentication.")
    declared.responses[503] = Readiness
    return declared


OPERATIONS = [
    op("GET", "/health", get_health, summary="Health of the API, its database and its queue", tag="Health",
       operation_id="getHealth", auth=False, answer=Health, errors=(503,), transaction="none",
       description="503 with the failing part `down`. No authentication."),
    _ready(),
]
