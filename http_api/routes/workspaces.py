from http_api.declare import op
from http_api.routing import Call
from service import workspaces
from service.validation import ID, Bool, page_of, record


def list_workspaces(call: Call) -> dict:
    return workspaces.list_workspaces(actor=call.actor)


def list_profiles(call: Call) -> dict:
    return workspaces.list_profiles(actor=call.actor, **call.query).as_dict()


def create_profile(call: Call) -> dict:
    return workspaces.create_profile(actor=call.actor, **call.body)


def get_profile(call: Call) -> dict:
    return workspaces.get_profile(actor=call.actor, profile_id=call.path["id"])


def update_profile(call: Call) -> dict:
    return workspaces.update_profile(actor=call.actor, profile_id=call.path["id"], **call.body)


def delete_profile(call: Call) -> dict:
    return workspaces.delete_profile(actor=call.actor, profile_id=call.path["id"])


PROFILE_DELETED = record("ProfileDeleted", {"id": ID, "deleted": Bool()})

OPERATIONS = [
    op("GET", "/workspaces", list_workspaces, summary="Workspaces the caller can act in", tag="Workspaces",
       operation_id="listWorkspaces", answer=workspaces.WORKSPACE_LIST),
    op("GET", "/profiles", list_profiles, summary="List profiles", tag="Profiles", operation_id="listProfiles",
       paged=True, answer=page_of(workspaces.PROFILE)),
    op("POST", "/profiles", create_profile, summary="Create a profile", tag="Profiles",
       operation_id="createProfile", ok=201, body=workspaces.CREATE_PROFILE, answer=workspaces.PROFILE,
       description="Only a key with scope `full` may create profiles (403 otherwise)."),
    op("GET", "/profiles/{id}", get_profile, summary="Get a profile", tag="Profiles", operation_id="getProfile",
       answer=workspaces.PROFILE),
    op("PATCH", "/profiles/{id}", update_profile, summary="Rename a profile", tag="Profiles",
       operation_id="updateProfile", body=workspaces.UPDATE_PROFILE, answer=workspaces.PROFILE),
    op("DELETE", "/profiles/{id}", delete_profile, summary="Delete a profile without accounts", tag="Profiles",
       operation_id="deleteProfile", answer=PROFILE_DELETED, errors=(409,),
       description="409 while the profile has any account, connected or disconnected: disconnect and "
                   "permanently delete its accounts first."),
]
