from http_api.declare import op
from http_api.routing import Call
from kit.pagination import Page
from kit.shapes import PageQuery, page_of
from service.identity import workspaces
from service.identity.workspace_shapes import (
    CreateProfile,
    Profile,
    ProfileDeleted,
    UpdateProfile,
    UpdateWorkspaceSettings,
    WorkspaceList,
    WorkspaceSettings,
)


def list_workspaces(call: Call) -> WorkspaceList:
    return workspaces.list_workspaces(actor=call.actor, arrived=call.arrived)


def get_settings(call: Call) -> WorkspaceSettings:
    return workspaces.get_settings(actor=call.actor, workspace_id=call.path["id"])


def update_settings(call: Call) -> WorkspaceSettings:
    return workspaces.update_settings(actor=call.actor, workspace_id=call.path["id"], **dict(call.body))


def list_profiles(call: Call) -> Page:
    return workspaces.list_profiles(actor=call.actor, **dict(call.query))


def create_profile(call: Call) -> Profile:
    return workspaces.create_profile(actor=call.actor, **dict(call.body))


def get_profile(call: Call) -> Profile:
    return workspaces.get_profile(actor=call.actor, profile_id=call.path["id"])


def update_profile(call: Call) -> Profile:
    return workspaces.update_profile(actor=call.actor, profile_id=call.path["id"], **dict(call.body))


def delete_profile(call: Call) -> ProfileDeleted:
    return workspaces.delete_profile(actor=call.actor, profile_id=call.path["id"])


OPERATIONS = [
    op("GET", "/workspaces", list_workspaces, summary="Workspaces the caller can act in", tag="Workspaces",
       operation_id="listWorkspaces", answer=WorkspaceList),
    op("GET", "/workspaces/{id}/settings", get_settings, summary="The workspace's settings", tag="Workspaces",
       operation_id="getWorkspaceSettings", answer=WorkspaceSettings),
    op("PATCH", "/workspaces/{id}/settings", update_settings, summary="Change the workspace's settings",
       tag="Workspaces", operation_id="updateWorkspaceSettings", body=UpdateWorkspaceSettings,
       answer=WorkspaceSettings,
       description="Only a key with scope `full` and permission `read-write` (403 otherwise). Fields left out "
                   "keep their value."),
    op("GET", "/profiles", list_profiles, summary="List profiles", tag="Profiles", operation_id="listProfiles",
       query=PageQuery, answer=page_of(Profile)),
    op("POST", "/profiles", create_profile, summary="Create a profile", tag="Profiles",
       operation_id="createProfile", ok=201, body=CreateProfile, answer=Profile,
       description="Only a key with scope `full` may create profiles (403 otherwise)."),
    op("GET", "/profiles/{id}", get_profile, summary="Get a profile", tag="Profiles", operation_id="getProfile",
       answer=Profile),
    op("PATCH", "/profiles/{id}", update_profile, summary="Rename a profile", tag="Profiles",
       operation_id="updateProfile", body=UpdateProfile, answer=Profile),
    op("DELETE", "/profiles/{id}", delete_profile, summary="Delete a profile without accounts", tag="Profiles",
       operation_id="deleteProfile", answer=ProfileDeleted, errors=(409,),
       description="409 while the profile has any account, connected or disconnected: disconnect and "
                   "permanently delete its accounts first."),
]
