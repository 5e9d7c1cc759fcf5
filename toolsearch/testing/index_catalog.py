"""The toy catalog and the queries of the tool-index contract (:mod:`.index_contract`).

``CATALOG`` is session "a" of every contract index: 32 tools of several services, in mixed
naming styles (``snake_case``, ``camelCase``, dotted, dashed, a German name), with nested
schemas and enums. ``OTHER_TOOLS`` is session "b": unrelated tools, one of them sharing a
name (``send_email``) with a different meaning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolsearch.tools.definition import ToolDefinition

__all__ = [
    "BROAD_QUERY",
    "CATALOG",
    "CATEGORIES",
    "CONCURRENT_QUERIES",
    "HOSTILE_QUERIES",
    "ISOLATION_QUERIES",
    "NAMES",
    "OTHER_ONLY",
    "OTHER_TOOLS",
    "obj",
    "string",
]


def obj(properties: dict[str, Any], required: Sequence[str] = (), **extra: Any) -> dict[str, Any]:
    """An object schema with ``properties`` (and ``required``, and any other keyword)."""
    schema: dict[str, Any] = {"type": "object", "properties": properties, **extra}
    if required:
        schema["required"] = list(required)
    return schema


def string(description: str, **extra: Any) -> dict[str, Any]:
    """A string property's schema."""
    return {"type": "string", "description": description, **extra}


def _tool(name: str, description: str, schema: dict[str, Any], category: str) -> ToolDefinition:
    return ToolDefinition(
        name=name, description=description, input_schema=schema, category=category
    )


CATALOG: tuple[ToolDefinition, ...] = (
    # weather
    _tool(
        "getWeatherForecast",
        "Get the weather forecast for a city for the next days: temperature, rain and wind.",
        obj(
            {
                "location": obj(
                    {"city": string("City name"), "countryCode": string("ISO 3166 country code")},
                    ["city"],
                    description="Where to forecast",
                ),
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "units": string("Unit system", enum=["metric", "imperial"]),
            },
            ["location"],
        ),
        "weather",
    ),
    _tool(
        "get_current_weather",
        "Current weather conditions at a location right now.",
        obj({"location": string("City or coordinates")}, ["location"]),
        "weather",
    ),
    _tool(
        "weather.alerts.list",
        "List active severe weather alerts (storms, floods, heat) for a region.",
        obj({"region": string("Region code"), "severity": string("", enum=["minor", "severe"])}),
        "weather",
    ),
    # email
    _tool(
        "send_email",
        "Send an email message to one or more recipients, with optional attachments.",
        obj(
            {
                "to": {"type": "array", "items": string("Recipient email address")},
                "subject": string("Subject line"),
                "body": string("Plain-text body"),
                "attachments": {
                    "type": "array",
                    "items": obj(
                        {"fileName": string("File name"), "mimeType": string("MIME type")}
                    ),
                },
            },
            ["to", "subject", "body"],
        ),
        "email",
    ),
    _tool(
        "gmail.searchMessages",
        "Search the mailbox for messages matching a Gmail query such as from:alice.",
        obj({"query": string("Gmail search query"), "maxResults": {"type": "integer"}}),
        "email",
    ),
    _tool(
        "email-delete-draft",
        "Delete a saved draft from the mailbox.",
        obj({"draftId": string("Draft identifier")}, ["draftId"]),
        "email",
    ),
    # github
    _tool(
        "github.create-issue",
        "Create a new issue in a GitHub repository with a title, body and labels.",
        obj(
            {
                "repo": string("owner/name of the repository"),
                "title": string("Issue title"),
                "body": string("Issue description in Markdown"),
                "labels": {"type": "array", "items": {"type": "string"}},
            },
            ["repo", "title"],
        ),
        "dev",
    ),
    _tool(
        "github.list_pull_requests",
        "List open or closed pull requests of a GitHub repository.",
        obj({"repo": string("owner/name"), "state": string("", enum=["open", "closed", "all"])}),
        "dev",
    ),
    _tool(
        "github.mergePullRequest",
        "Merge a pull request once checks have passed.",
        obj(
            {
                "repo": string("owner/name"),
                "number": {"type": "integer"},
                "method": string("Merge method", enum=["merge", "squash", "rebase"]),
            }
        ),
        "dev",
    ),
    _tool(
        "ci_run_pipeline",
        "Trigger a continuous-integration pipeline run for a branch.",
        obj({"branch": string("Git branch")}),
        "dev",
    ),
    # calendar
    _tool(
        "calendar-list-events",
        "List the events on a calendar between two dates.",
        obj(
            {
                "calendarId": string("Calendar"),
                "start": string("Start date"),
                "end": string("End date"),
            }
        ),
        "calendar",
    ),
    _tool(
        "calendar-create-event",
        "Create a calendar event (a meeting or appointment) and invite attendees.",
        obj(
            {
                "summary": string("Event title"),
                "start": string("Start time, ISO-8601"),
                "attendees": {
                    "type": "array",
                    "items": obj(
                        {"email": string("Attendee email"), "optional": {"type": "boolean"}}
                    ),
                },
            }
        ),
        "calendar",
    ),
    _tool(
        "calendar.deleteEvent",
        "Cancel and delete a calendar event.",
        obj({"eventId": string("Event id")}),
        "calendar",
    ),
    # chat
    _tool(
        "slack_post_message",
        "Post a message to a Slack channel or thread.",
        obj({"channel": string("Channel name"), "text": string("Message text")}),
        "chat",
    ),
    _tool(
        "slack.listChannels",
        "List the Slack channels of the workspace.",
        obj({"includeArchived": {"type": "boolean"}}),
        "chat",
    ),
    # files
    _tool(
        "fs.readFile",
        "Read the contents of a file from the local disk.",
        obj({"path": string("File path"), "encoding": string("", enum=["utf-8", "latin-1"])}),
        "files",
    ),
    _tool(
        "fs.write_file",
        "Write text contents to a file on the local disk, replacing it.",
        obj({"path": string("File path"), "content": string("Text to write")}),
        "files",
    ),
    _tool(
        "s3-upload-object",
        "Upload an object to an Amazon S3 bucket.",
        obj({"bucket": string("Bucket name"), "key": string("Object key")}),
        "files",
    ),
    # data
    _tool(
        "db_query_sql",
        "Run a read-only SQL query against the analytics database.",
        obj({"sql": string("SELECT statement")}),
        "data",
    ),
    _tool(
        "db.listTables",
        "List the tables of the analytics database with their columns.",
        obj({"schema": string("Database schema")}),
        "data",
    ),
    # finance
    _tool(
        "stripe.createRefund",
        "Refund a payment, fully or partially, to the customer's card.",
        obj({"paymentId": string("Payment intent id"), "amount": {"type": "integer"}}),
        "finance",
    ),
    _tool(
        "stripe_list_invoices",
        "List invoices of a customer with their status.",
        obj(
            {"customer": string("Customer id"), "status": string("", enum=["paid", "open", "void"])}
        ),
        "finance",
    ),
    _tool(
        "überweisung_senden",
        "Eine Banküberweisung an ein anderes Konto senden (bank transfer).",
        obj({"iban": string("IBAN des Empfängers"), "betrag": {"type": "number"}}),
        "finance",
    ),
    # maps
    _tool(
        "maps.getDirections",
        "Get driving, walking or transit directions between two places.",
        obj(
            {
                "origin": string("Start address"),
                "destination": string("Destination address"),
                "mode": string("Travel mode", enum=["driving", "walking", "transit"]),
            }
        ),
        "maps",
    ),
    _tool(
        "maps_geocode_address",
        "Convert a street address into latitude and longitude coordinates.",
        obj({"address": string("Street address")}),
        "maps",
    ),
    # media and misc
    _tool(
        "spotify-play-track",
        "Play a song or track on Spotify.",
        obj({"trackName": string("Song title"), "artist": string("Artist")}),
        "media",
    ),
    _tool(
        "translateText",
        "Translate text from one language into another.",
        obj({"text": string("Text"), "targetLanguage": string("Target language code")}),
        "productivity",
    ),
    _tool(
        "notion.create_page",
        "Create a page in a Notion workspace.",
        obj({"title": string("Page title"), "parent": obj({"pageId": string("Parent page")})}),
        "productivity",
    ),
    _tool(
        "set_alarm",
        "Set an alarm clock for the given time, provided in ISO-8601 format.",
        obj({"time": string("Time in ISO-8601 format")}, ["time"]),
        "productivity",
    ),
    _tool(
        "get_current_time",
        "Get the current date and time in the user's timezone.",
        obj({}),
        "productivity",
    ),
    _tool(
        "web_search",
        "Search the web and return the top result pages.",
        obj({"q": string("Search terms")}),
        "productivity",
    ),
    _tool(
        "generateImage",
        "Generate an image from a text prompt.",
        obj({"prompt": string("What to draw"), "size": string("", enum=["256x256", "1024x1024"])}),
        "media",
    ),
)
NAMES = tuple(t.name for t in CATALOG)
CATEGORIES = tuple(sorted({t.category for t in CATALOG if t.category}))

# A second, unrelated session. ``send_email`` deliberately shares a name with CATALOG.
OTHER_TOOLS: tuple[ToolDefinition, ...] = (
    _tool(
        "stock_quote",
        "Look up the latest stock price quote for a ticker symbol.",
        obj({"ticker": string("Ticker symbol")}),
        "finance",
    ),
    _tool(
        "send_email",
        "Send a fax document to a telephone number.",
        obj({"fax_number": string("Fax number")}),
        "email",
    ),
    _tool(
        "kubernetes.scaleDeployment",
        "Scale a Kubernetes deployment to a number of replicas.",
        obj({"deployment": string("Deployment"), "replicas": {"type": "integer"}}),
        "dev",
    ),
)
OTHER_ONLY = frozenset({"stock_quote", "kubernetes.scaleDeployment"})
"""The names only session "b" has."""

# Queries of a session's own tools and of the other's: none may leak across.
ISOLATION_QUERIES = (
    "stock price quote",
    "stock_quote",
    "kubernetes.scaleDeployment",
    "scale deployment replicas",
    "fax document telephone",
    "send an email",
    "weather",
)

# Queries no index may raise on (each a trap for some engine: query parsers, regex, UTF-8).
HOSTILE_QUERIES = {
    "empty": "",
    "spaces": "   ",
    "whitespace": "\n\t \r",
    "unicode": "Wetter in Zürich 天气",
    "emoji": "🌦️ weather? ☔",
    "rtl": "الطقس في القاهرة",
    "long-words": ("weather forecast for Zürich tomorrow " * 300)[:10_000],
    "long-token": "a" * 10_000,
    "open-parens": "((((",
    "open-class": "[a-",
    "backslash": "\\",
    "trailing-backslash": "weather\\",
    "boolean-words": "AND OR NOT",
    "field-boost": "title:x^3",
    "star": "*",
    "question": "?",
    "dot-star": ".*",
    "unbalanced-quote": '"unterminated',
    "field-group": "name:(foo OR",
    "dash": "-",
    "all-punctuation": '+-&&||!(){}[]^"~*?:\\/<>=@#$%',
    "nul": "weather\x00email",
    "sql": "SELECT * FROM tools; DROP TABLE tools;--",
    "stop-words": "the of and to is",
    "fuzzy": "weathr~2",
    "range": "[a TO z]",
    "regex-like": "/send.*email/",
    "numbers": "1234567890 3.14 -5e10",
}

# Words from nearly every tool: every backend matches many tools with this.
BROAD_QUERY = (
    "weather email github calendar slack file database refund invoice maps spotify "
    "translate page alarm time search image pull request issue event message list"
)

# What the searchers of the concurrency tests ask (of session "a"; some name "b"'s tools).
CONCURRENT_QUERIES = (
    "send an email",
    "weather forecast",
    "github.create-issue",
    "list calendar events",
    "stock_quote",
    "kubernetes deployment replicas",
    "fax",
    BROAD_QUERY,
)
