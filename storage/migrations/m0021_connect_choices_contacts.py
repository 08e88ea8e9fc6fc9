"""What a grant reaching several Pages, ad accounts, organizations or channels offers to choose
from (`connect_selection`); contacts' profiles read from the platform (`conversation.contact_profile_at`
and the engine's `contact_lookup` rows). New tables start empty; the new column starts null, so a
contact already known is looked up when it next writes."""

from peewee import Database
from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

from storage.db import is_postgres
from storage.models import ConnectSelection, ContactLookup, Conversation


def apply(database: Database) -> None:
    database.create_tables([ConnectSelection, ContactLookup], safe=True)
    migrator = PostgresqlMigrator(database) if is_postgres() else SqliteMigrator(database)
    if "contact_profile_at" not in {column.name for column in database.get_columns("conversation")}:
        migrate(migrator.add_column("conversation", "contact_profile_at",
                                    Conversation._meta.fields["contact_profile_at"]))
