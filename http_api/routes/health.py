from http_api.declare import op
from http_api.routing import Call, Reply
from service.settings import VERSION
from service.workspace_shapes import Health
from storage import db
from tasks import queue


def get_health(call: Call) -> Reply:
    database = "ok" if db.ping() else "down"
    queue_state = "ok" if queue.ping() else "down"
    status = "ok" if database == queue_state == "ok" else "down"
    report = Health(status=status, version=VERSION, database=database, queue=queue_state)
    return Reply(report, status=200 if status == "ok" else 503)


OPERATIONS = [
    op("GET", "/health", get_health, summary="Health of the API, its database and its queue", tag="Health",
       operation_id="getHealth", auth=False, answer=Health, errors=(503,), transaction="none",
       description="503 with the failing part `down`. No authentication."),
]
