"""The parsers of the eight snapshot-backed development catalogs (benchmarks/dev_catalogs.py).

Every fixture is a few hand-written records in the source's format; no third-party data.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import dev_catalogs  # noqa: E402
from toolsearch.tools.names import TOOL_NAME_PATTERN  # noqa: E402


def _valid(catalog) -> None:
    for tool in catalog.tools:
        assert TOOL_NAME_PATTERN.match(tool.name), tool.name
        assert tool.input_schema["type"] == "object"


# --------------------------------------------------------------------------- ToolAlpaca


def _alpaca_api(name: str, description: str) -> dict:
    document = {
        "openapi": "3.0.1",
        "info": {"title": name, "version": "1"},
        "paths": {
            "/holidays/{year}": {
                "get": {
                    "operationId": "GetHolidays",
                    "summary": "List holidays",
                    "parameters": [
                        {
                            "name": "year",
                            "in": "path",
                            "required": True,
                            "description": "The year.",
                            "schema": {"type": "integer"},
                        }
                    ],
                }
            },
            "/today": {"get": {"operationId": "IsToday", "summary": "Is today a holiday"}},
        },
    }
    return {
        "Name": name,
        "Description": description,
        "Category": "Calendar",
        "Documentation": json.dumps(document),
        "Function_Description": {
            "GetHolidays": (
                'List the holidays of a year\nParameters: {"year": "Required."}\nOutput: list'
            ),
            "IsToday": "Whether today is a holiday\nParameters: {}\nOutput: bool",
            "components": "a stray entry every API has",
        },
        "Function_Projection": {
            "GetHolidays": ["/holidays/{year}", "get"],
            "IsToday": ["/today", "get"],
        },
        "Instructions": [
            "Holidays in 2024?",
            "Is today a holiday, and what about 2025?",
            "Ask me.",
        ],
        "Golden_Answers": [
            [{"Action": "GetHolidays", "Action_Input": '{"year": 2024}'}],
            [{"Action": "IsToday", "Action_Input": "{}"}, {"Action": "[Optional]GetHolidays"}],
            [{"Action": "getDetails", "Action_Input": "{}"}],
        ],
    }


def test_toolalpaca_pools_apis_with_namespaced_names():
    name, catalog, queries = dev_catalogs.toolalpaca_set(
        {
            "real": [_alpaca_api("Holiday API", "Public holidays")],
            "simulated": [_alpaca_api("Améthyste", "Image effects")],
        }
    )
    assert name == "toolalpaca"
    _valid(catalog)
    assert sorted(catalog.names) == [
        "Amethyste__GetHolidays",
        "Amethyste__IsToday",
        "Holiday_API__GetHolidays",
        "Holiday_API__IsToday",
    ]
    tool = next(t for t in catalog.tools if t.name == "Holiday_API__GetHolidays")
    assert tool.description == "List the holidays of a year\n\nHoliday API: Public holidays"
    assert tool.category == "Holiday API"
    assert tool.input_schema["required"] == ["year"]
    assert tool.input_schema["properties"]["year"]["type"] == "integer"
    golds = [q.gold for q in queries]
    assert golds[:2] == [
        ("Holiday_API__GetHolidays",),
        ("Holiday_API__IsToday", "Holiday_API__GetHolidays"),  # [Optional] stripped
    ]
    assert len(queries) == 4  # the two "Ask me." (getDetails only) are dropped
    assert queries.notes["gold_missing"] == {"getDetails": 2}
    assert queries.notes["queries_without_gold"] == 2
    assert queries.queries[0].metadata == {"api": "Holiday API", "split": "real"}


# --------------------------------------------------------------------------- API-Bank

_ALARM = """from apis.api import API


class AddAlarm(API):
    description = "The API for setting an alarm."
    input_parameters = {
        'token': {'type': 'str', 'description': "User's token."},
        'time': {'type': 'str', 'description': 'The time for alarm.'},
    }
    output_parameters = {'status': {'type': 'str', 'description': 'success or failed'}}

    def call(self, token, time):
        return {}
"""
_TOKEN = """class GetUserToken(API):
    description = 'Get the user token.'
    input_parameters = {'username': {'type': 'str', 'description': 'The username.'}}
"""
_SEARCHER = """class ToolSearcher(API):
    description = 'Searches for relevant tools in library based on the keywords.'
    input_parameters = {'keywords': {'type': 'str', 'description': 'The keyword.'}}
"""
_BASE = "class API:\n    def call(self, **kwargs):\n        raise NotImplementedError\n"


def _turn(role: str, text: str = "", api: str = "") -> dict:
    if role == "API":
        return {"role": "API", "api_name": api, "param_dict": {}, "result": {}}
    return {"role": role, "text": text}


def test_apibank_reads_classes_and_dialogues():
    sources = {
        "api-bank/apis/add_alarm.py": _ALARM,
        "api-bank/apis/get_user_token.py": _TOKEN,
        "api-bank/apis/tool_search.py": _SEARCHER,
        "api-bank/apis/api.py": _BASE,
    }
    level1 = "api-bank/lv1-lv2-samples/level-1-given-desc/AddAlarm-GetUserToken-level-1-1.jsonl"
    level2 = "api-bank/lv1-lv2-samples/level-2-toolsearcher/AddAlarm-level-3-1.jsonl"
    dialogues = {
        level1: [
            _turn("User", "Set an alarm for 7am."),
            _turn("AI", "Your username and password?"),
            _turn("API", api="GetUserToken"),
            _turn("User", "It is for tomorrow."),
            _turn("API", api="AddAlarm"),
            _turn("User", "Thanks!"),
        ],
        level2: [
            _turn("User", "Wake me at 9."),
            _turn("API", api="ToolSearcher"),
            _turn("API", api="AddAlarm"),
        ],
        "api-bank/lv1-lv2-samples/level-1-given-desc/Chat-level-1-1.jsonl": [
            _turn("User", "Hello"),
            _turn("AI", "Hi"),
        ],
    }
    name, catalog, queries = dev_catalogs.apibank_set(sources, dialogues)
    assert name == "api-bank"
    _valid(catalog)
    assert sorted(catalog.names) == ["AddAlarm", "GetUserToken"]  # no ToolSearcher, no API
    alarm = next(t for t in catalog.tools if t.name == "AddAlarm")
    assert alarm.description == "The API for setting an alarm."
    assert alarm.input_schema["properties"]["time"] == {
        "type": "string",
        "description": "The time for alarm.",
    }
    by_id = {q.id: q for q in queries}
    first = by_id["api-bank_lv1_AddAlarm-GetUserToken-level-1-1"]
    assert first.text == "Set an alarm for 7am.\nIt is for tomorrow."  # not the "Thanks!"
    assert first.gold == ("GetUserToken", "AddAlarm")
    assert first.metadata["level"] == 1
    second = by_id["api-bank_lv2_AddAlarm-level-3-1"]
    assert (second.text, second.gold, second.metadata["level"]) == (
        "Wake me at 9.",
        ("AddAlarm",),
        2,
    )
    assert len(queries) == 2
    assert queries.notes["dialogues_without_api_call"] == 1


# --------------------------------------------------------------------------- Gorilla


def _hub_row(api_name: str, api_call: str, arguments, description: str = "A model.") -> dict:
    return {
        "domain": "Image Classification",
        "framework": "x",
        "functionality": "Classify images",
        "api_name": api_name,
        "api_call": api_call,
        "api_arguments": arguments,
        "python_environment_requirements": [],
        "example_code": "N/A",
        "performance": {},
        "description": description,
    }


def _eval_row(instruction: str, data: dict, output: bool = True) -> dict:
    code = f"###Instruction: {instruction}\n" + ("###Output: <<<domain>>>: x\n" if output else "")
    return {"code": code, "api_call": data["api_call"], "provider": "x", "api_data": data}


def test_gorilla_huggingface_keys_by_model_id():
    first = _hub_row("org/model-a", "AutoModel.from_pretrained('org/model-a')", "N/A")
    again = _hub_row("org/model-a", "pipeline('x', model='org/model-a')", [], "a repeat")
    other = _hub_row("org/model.b", "AutoModel.from_pretrained('org/model.b')", ["text", "N/A"])
    evals = [
        _eval_row("Sort my holiday photos.", first),
        _eval_row("Tag these images.", other, output=False),
        _eval_row("Unknown model.", _hub_row("org/absent", "x", [])),
    ]
    name, catalog, queries = dev_catalogs.gorilla_set("huggingface", [first, again, other], evals)
    assert name == "gorilla-hf"
    _valid(catalog)
    assert [t.name for t in catalog.tools] == ["org_model-a", "org_model_b"]
    assert catalog.tools[0].description == "Image Classification: Classify images. A model."
    assert catalog.tools[0].category == "Image Classification"
    assert catalog.tools[0].input_schema == {"type": "object", "properties": {}}
    assert catalog.tools[1].input_schema["properties"] == {"text": {}}
    assert catalog.notes["duplicate_rows"] == 1
    assert [(q.text, q.gold) for q in queries] == [
        ("Sort my holiday photos.", ("org_model-a",)),
        ("Tag these images.", ("org_model_b",)),  # no ###Output: up to the end
    ]
    assert queries.notes["gold_missing"] == {"org/absent": 1}


def test_gorilla_tfhub_dedupes_by_call_and_keeps_loaders_apart():
    url = "https://tfhub.dev/google/imagenet/mobilenet_v2/feature_vector/4"
    load = _hub_row("model_id", f"hub.load('{url}')", ["model_url"])
    repeat = _hub_row("model_id", f"hub.load('{url}')", ["model_url"], "a repeat")
    keras = _hub_row("mobilenet", f"hub.KerasLayer('{url}')", {"input_shape": "(224, 224, 3)"})
    quoted = _hub_row("mobilenet", f'hub.KerasLayer("{url}")', {})
    name, catalog, queries = dev_catalogs.gorilla_set(
        "tensorflowhub",
        [load, repeat, keras, quoted],
        [_eval_row("Embed my photos.", keras), _eval_row("Load it.", repeat)],
    )
    assert name == "gorilla-tf"
    _valid(catalog)
    names = [t.name for t in catalog.tools]
    assert names[:2] == [
        "load_google_imagenet_mobilenet_v2_feature_vector_4",
        "keras_google_imagenet_mobilenet_v2_feature_vector_4",
    ]
    assert names[2].startswith("keras_google_imagenet_mobilenet_v2_feature_vector_4_")  # clash
    assert catalog.notes == {"rows": 4, "duplicate_rows": 1, "renamed": 1}
    assert catalog.tools[1].input_schema["properties"] == {
        "input_shape": {"description": "(224, 224, 3)"}
    }
    assert [q.gold for q in queries] == [(names[1],), (names[0],)]


def test_gorilla_torchhub_names_from_repo_and_model():
    rows = [
        _hub_row(
            "resnet",
            "torch.hub.load(repo_or_dir='pytorch/vision', model='resnet50', pretrained=True)",
            {"pretrained": "True"},
        ),
        _hub_row(
            "resnet",
            "torch.hub.load(repo_or_dir='NVIDIA/DeepLearningExamples:torchhub', "
            "model='nvidia_resnet50', pretrained=True)",
            "pretrained",
        ),
        _hub_row("fairseq", "torch.hub.load(repo_or_dir='pytorch/fairseq')", []),
    ]
    name, catalog, queries = dev_catalogs.gorilla_set(
        "torchhub", rows, [_eval_row("Classify images with a ResNet.", rows[1])]
    )
    assert name == "gorilla-torch"
    _valid(catalog)
    assert [t.name for t in catalog.tools] == [
        "pytorch_vision_resnet50",
        "NVIDIA_DeepLearningExamples_nvidia_resnet50",
        "pytorch_fairseq",
    ]
    assert catalog.tools[1].input_schema["properties"] == {"pretrained": {}}
    assert queries.queries[0].gold == ("NVIDIA_DeepLearningExamples_nvidia_resnet50",)


def _train_row(instruction: str, data: dict) -> dict:
    output = {"domain": "x", "api_call": data["api_call"], "explanation": "e, with 'quotes'"}
    code = repr({"Instruction": "@@", "Output": output}).replace("'@@'", instruction)
    return {"code": code, "api_call": data["api_call"], "provider": "x", "api_data": data}


def test_gorilla_train_split_reads_the_repr_form_over_the_eval_catalog():
    rows = [
        _hub_row("a", "torch.hub.load(repo_or_dir='pytorch/vision', model='resnet50')", []),
        _hub_row("b", "torch.hub.load(repo_or_dir='pytorch/vision', model='vgg16')", []),
    ]
    train = [
        _train_row("Classify my photos, fast.", rows[1]),
        _train_row('"Find a model for images."', rows[0]),
        _train_row("A model not in the catalog.", _hub_row("c", "torch.hub.load('x/y')", [])),
        _eval_row("Already in the eval form.", rows[0]),
    ]
    name, catalog, queries = dev_catalogs.gorilla_train_set("torchhub", rows, train)
    _, eval_catalog, _ = dev_catalogs.gorilla_set("torchhub", rows, [])
    assert name == "gorilla-torch"
    assert catalog.tools == eval_catalog.tools
    assert [(q.id, q.text, q.gold) for q in queries] == [
        ("gorilla-torch_train_0", "Classify my photos, fast.", ("pytorch_vision_vgg16",)),
        ("gorilla-torch_train_1", "Find a model for images.", ("pytorch_vision_resnet50",)),
        ("gorilla-torch_train_3", "Already in the eval form.", ("pytorch_vision_resnet50",)),
    ]
    assert queries.notes["train_rows"] == 4
    assert queries.notes["queries_without_gold"] == 1


# --------------------------------------------------------------------------- RestBench


def _spec() -> dict:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Music", "version": "1"},
        "paths": {
            "/artists/{id}": {
                "parameters": [{"$ref": "#/components/parameters/PathId"}],
                "get": {
                    "operationId": "get-an-artist",
                    "summary": "Get Artist",
                    "description": "Catalog information for one artist.",
                    "tags": ["Artists"],
                    "parameters": [{"$ref": "#/components/parameters/QueryMarket"}],
                },
            },
            "/search": {
                "get": {
                    "summary": "Search",
                    "parameters": [{"name": "q", "in": "query", "required": True}],
                }
            },
        },
        "components": {
            "parameters": {
                "PathId": {
                    "name": "id",
                    "in": "path",
                    "required": "true",
                    "schema": {"type": "string"},
                },
                "QueryMarket": {
                    "name": "market",
                    "in": "query",
                    "required": "false",
                    "schema": {"type": "string", "description": "A country code."},
                },
            }
        },
    }


def test_restbench_maps_method_and_path_to_operations():
    rows = [
        {
            "query": "Who is the artist of Hello?",
            "solution": ["GET /search", " GET  /artists/{id} "],
        },
        {"query": "A typo'd solution", "solution": ["GET /artist/{id}"]},
    ]
    name, catalog, queries = dev_catalogs.restbench_set("music", _spec(), rows)
    assert name == "restbench-music"
    _valid(catalog)
    assert [t.name for t in catalog.tools] == ["get-an-artist", "get_search"]
    artist = catalog.tools[0]
    assert artist.category == "Artists"
    assert artist.description.startswith("Get Artist")
    assert artist.input_schema["required"] == ["id"]  # "false" is not required
    assert set(artist.input_schema["properties"]) == {"id", "market"}
    assert [(q.id, q.gold) for q in queries] == [
        ("restbench-music_0", ("get_search", "get-an-artist"))
    ]
    assert queries.notes == {"gold_missing": {"GET /artist/{id}": 1}, "queries_without_gold": 1}


# --------------------------------------------------------------------------- Seal-Tools


def test_seal_tools_sanitizes_names_and_types():
    tools = [
        {
            "api_name": "getAirQuality",
            "api_description": "Air quality of a city",
            "field": "Environment/Air",
            "parameters": {
                "city": {"type": "str", "description": "The city"},
                "days": {"type": "int", "description": "How many days"},
                "unit": {"type": "Celsius|Fahrenheit", "description": "Unit"},
            },
            "required": ["city", "not_a_parameter"],
            "responses": {"aqi": {"type": "int", "description": "index"}},
        },
        {
            "api_name": "getPM2.5 Level",
            "api_description": "PM2.5 of a city",
            "field": "Environment/Air",
            "parameters": {},
            "required": [],
        },
    ]
    split = [
        {
            "id": "dev-easy-0",
            "query": "How clean is the air in Oslo?",
            "calling": [{"api": "getAirQuality"}],
        },
        {
            "id": "dev-difficult-0",
            "query": "PM2.5 and air quality of Rome, twice.",
            "calling": [
                {"api": "getPM2.5 Level"},
                {"api": "getAirQuality"},
                {"api": "getAirQuality"},
            ],
        },
    ]
    name, catalog, queries = dev_catalogs.seal_set(tools, split)
    assert name == "seal-tools"
    _valid(catalog)
    assert [t.name for t in catalog.tools] == ["getAirQuality", "getPM2_5_Level"]
    schema = catalog.tools[0].input_schema
    assert schema["required"] == ["city"]
    assert schema["properties"]["days"] == {"type": "integer", "description": "How many days"}
    assert schema["properties"]["unit"] == {"description": "Unit (Celsius|Fahrenheit)"}
    assert catalog.tools[0].category == "Environment/Air"
    assert catalog.notes["sanitized"] == 1
    assert [(q.id, q.gold) for q in queries] == [
        ("dev-easy-0", ("getAirQuality",)),
        ("dev-difficult-0", ("getPM2_5_Level", "getAirQuality")),
    ]


def test_seal_tools_other_splits_are_one_set_over_the_same_catalog():
    tools = [{"api_name": "getWeather", "api_description": "Weather of a city"}]
    in_domain = [{"id": "0", "query": "Weather in Oslo?", "calling": [{"api": "getWeather"}]}]
    out_domain = [
        {"id": "0", "query": "Weather in Rome?", "calling": [{"api": "getWeather"}]},
        {"id": "1", "query": "Unknown tool", "calling": [{"api": "missing"}]},
    ]
    name, catalog, queries = dev_catalogs.seal_train_set(tools, [in_domain, out_domain])
    assert name == "seal-tools"
    assert [t.name for t in catalog.tools] == ["getWeather"]
    assert [(q.id, q.text) for q in queries] == [
        ("seal-tools_train_0", "Weather in Oslo?"),
        ("seal-tools_train_1", "Weather in Rome?"),
    ]
    assert queries.notes["train_rows"] == 3
    assert queries.notes["queries_without_gold"] == 1
    assert "seal-tools" in dev_catalogs.TRAIN_LOADERS


def test_jsonl_skips_blank_lines():
    assert dev_catalogs.jsonl('{"a": 1}\n\n  \n{"b": 2}\n') == [{"a": 1}, {"b": 2}]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("Nager.Date", "Nager_Date"), ("A Bíblia Digital", "A_Biblia_Digital"), ("...", "tool")],
)
def test_tool_name(raw, expected):
    assert dev_catalogs.tool_name(raw) == expected
