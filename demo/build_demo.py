#!/usr/bin/env python
"""Build the "Verdant Isles" demo project: GraphRAG 3.x parquet tables in demo/output/.

The world is fictional and written for this project. A hand-written core (the people, guilds,
ships and inventions the demo questions are about) is extended with generated filler people
drawn from fixed name lists with a seeded random generator, so every run writes identical files.

Run:  python demo/build_demo.py            (writes demo/output/*.parquet, demo/input/, questions)
      python demo/build_demo.py --check    (build in memory and run the consistency checks only)

The script checks its own output: degrees, combined degrees, that every relationship's text
units state it, and that every question in demo/questions.jsonl still has exactly its gold answers.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
import sys
import uuid
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
OUT = HERE / "output"
NS = uuid.uuid5(uuid.NAMESPACE_DNS, "verdant-isles.demo.tog-explorer")
SEED = 412
CREATION_DATE = "2025-06-01 09:00:00 +0000"
PERIOD = "2025-06-01"
DOC_TITLE = "verdant_isles.txt"


def uid(kind: str, key: str) -> str:
    return str(uuid.uuid5(NS, f"{kind}:{key}"))


def sha512(text: str) -> str:
    return hashlib.sha512(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------------------------
# Relation kinds: description template (GraphRAG-style sentence), forward clause used in the
# prose of the source's passage, optional inverse clause used in the target's passage, weight.
# {S}/{T} are the endpoint titles with their article ({t}: bare title); a sentence start is
# capitalised later.
# ---------------------------------------------------------------------------------------------
KINDS: dict[str, tuple[str, str, str | None, float]] = {
    "island_of": ("{S} is one of the islands of {T}.", "is one of the islands that make up {T}", None, 9.0),
    "located_on": ("{S} is a town located on the island of {T}.", "lies on the island of {T}", None, 9.0),
    "capital_of": ("{S} is the capital of {T}.", "serves as the capital of {T}", None, 10.0),
    "mountain_on": ("{S} is a mountain on the island of {T}.", "rises above the island of {T}", None, 8.0),
    "river_on": ("{S} is a river that runs across the island of {T}.", "runs across the island of {T}", None, 8.0),
    "lake_on": ("{S} is a body of water on the island of {T}.", "lies on the island of {T}", None, 8.0),
    "flows_through": ("{S} flows through the town of {T}.", "flows through {T}", None, 7.0),
    "rises_on": ("{S} rises on the slopes of {T}.", "has its source on the slopes of {T}", None, 7.0),
    "born_in": ("{S} was born in the town of {T}.", "was born in {T}", None, 8.0),
    "born_on": ("{S} was born on the island of {T}.", "was born on the island of {T}", None, 7.0),
    "settled_on": ("{S} settled on the island of {T} and spent most of a long life there.",
                   "settled on the island of {T}", None, 5.0),
    "founded": ("{S} founded {T}.", "founded {T}", "was founded by {S}", 9.0),
    "founded_town": ("{S} founded the town of {T}.", "founded the town of {T}", "was founded by {S}", 9.0),
    "hq_in": ("{S} is headquartered in {T}.", "is headquartered in {T}", None, 8.0),
    "located_in": ("{S} is located in the town of {T}.", "stands in the town of {T}", None, 8.0),
    "member_of": ("{S} is a member of {T}.", "is a member of {T}", None, 6.0),
    "leads": ("{S} is the current head of {T}.", "is the current head of {T}", None, 7.0),
    "mentor_of": ("{S} is the mentor of {T}.", "was the mentor of {T}", "learned the trade under {S}", 8.0),
    "sibling_of": ("{S} and {T} are siblings.", "is the sibling of {T}", None, 7.0),
    "captained": ("{S} captained the ship {t}.", "captained {T}", "was commanded by {S}", 9.0),
    "built_by": ("{S} is a ship built by {T}.", "was built by {T}", None, 7.0),
    "home_port": ("{S} has its home port in {T}.", "sails from its home port of {T}", None, 7.0),
    "invented": ("{S} invented {T}.", "invented {T}", "was devised by {S}", 9.0),
    "manufactures": ("{S} manufactures {T}.", "manufactures {T}", "is made in quantity by {S}", 7.0),
    "demonstrated_at": ("{S} was first demonstrated at {T}.", "was first shown to the public at {T}", None, 6.0),
    "wrote": ("{S} wrote the book {t}.", "wrote {T}", "was written by {S}", 9.0),
    "about": ("{S} is a book about {T}.", "is a book about {T}", None, 6.0),
    "published_by": ("{S} was published by {T}.", "was published by {T}", None, 6.0),
    "studied_at": ("{S} studied at {T}.", "studied at {T}", None, 6.0),
    "held_in": ("{S} is a festival held every year in {T}.", "is held every year in {T}", None, 8.0),
    "held_on": ("{S} is celebrated across the island of {T}.", "is celebrated across the island of {T}", None, 7.0),
    "governs": ("{S} governs the island of {T}.", "governs {T}", None, 7.0),
    "struck": ("{S} was a storm that struck the island of {T}.", "struck the island of {T}", None, 7.0),
    "took_place_in": ("{S} took place in {T}.", "took place in {T}", None, 8.0),
    "took_part_in": ("{S} took part in {T}.", "took part in {T}", None, 6.0),
    "survived": ("{S} survived {T}.", "survived {T}", None, 5.0),
    "lost_in": ("{S} was a ship lost during {T}.", "was lost during {T}", None, 7.0),
    # one-off kinds for the two quirk edges and the two reversed duplicates
    "kept_light": ("{S} kept {T} for thirty winters.", "kept {T} for thirty winters", None, 4.0),
    "sailed_through": ("{S} sailed {T} through the Great Storm of 412.",
                       "sailed {T} through the Great Storm of 412", None, 3.0),
    "trained_by": ("{S} was trained as a lamp maker by {T}, his mentor.",
                   "was trained as a lamp maker by {T}, his mentor", None, 6.0),
    "home_of": ("{S} is home to the guildhall of {T}.", "is home to the guildhall of {T}", None, 5.0),
}
CAPITAL_ON = "{S} is the capital town of the island of {T}."
# The reversed duplicates mean the same fact as a canonical kind read backwards.
REVERSED_OF = {"trained_by": "mentor_of", "home_of": "hq_in"}


class World:
    def __init__(self) -> None:
        self.entities: dict[str, dict] = {}
        self.rels: list[dict] = []
        self.rng = random.Random(SEED)

    def add(self, title: str, type_: str, cat: str, desc: str | None = None, article: bool = False, **attrs):
        assert title not in self.entities, f"duplicate entity {title}"
        self.entities[title] = dict(title=title, type=type_, cat=cat, desc=desc, article=article, **attrs)

    def the(self, title: str) -> str:
        e = self.entities.get(title)
        return f"the {title}" if e and e["article"] else title

    def link(self, kind: str, s: str, t: str) -> None:
        assert kind in KINDS, kind
        key = (kind, s, t)
        assert all((r["kind"], r["source"], r["target"]) != key for r in self.rels), f"duplicate edge {key}"
        self.rels.append(dict(kind=kind, source=s, target=t))

    def by_cat(self, cat: str) -> list[str]:
        return [t for t, e in self.entities.items() if e["cat"] == cat]

    def out(self, s: str, kind: str) -> list[str]:
        return [r["target"] for r in self.rels if r["source"] == s and r["kind"] == kind]

    def inn(self, t: str, kind: str) -> list[str]:
        return [r["source"] for r in self.rels if r["target"] == t and r["kind"] == kind]


def cap(s: str) -> str:
    return s[:1].upper() + s[1:]


# ---------------------------------------------------------------------------------------------
# Geography
# ---------------------------------------------------------------------------------------------
ARCHIPELAGO = "Verdant Isles"

ISLANDS = {
    "Thornholm": "the largest and most crowded of the islands, green with orchards and busy with harbors",
    "Brackenmere": "a low island of ferns, sheep pasture and slow rivers",
    "Isle of Cairnloch": "a misty western island of standing stones, lochs and libraries",
    "Saltreach": "a dry southern island of salt pans, pearl beds and trading houses",
    "Emberrock": "a volcanic island whose warm black rock feeds its furnaces and glassworks",
    "Fennwick Isle": "a marshy island of reed beds and bell towers",
    "Gullhaven": "a windswept northern island known for seabird colonies and skilled harbor pilots",
    "Mossgard": "an old, hilly island of mossy fortresses and quiet scholars",
}

# town: (island, adjective, known for, is capital)
TOWNS = {
    "Saltmere": ("Thornholm", "bustling harbor", "lantern-lit quays and the seat of the Verdant Council", True),
    "Wrenford": ("Thornholm", "river", "shipyards and mapmakers", False),
    "Hollowmouth": ("Thornholm", "estuary", "herb gardens and the healers of the Green Lamp", False),
    "Kestrel Point": ("Thornholm", "cliff-top", "its lighthouses and the midsummer sailing race", False),
    "Ambergate": ("Thornholm", "market", "clockmakers and printing presses", False),
    "Lowbridge": ("Thornholm", "bridge", "its long ropewalks", False),
    "Pellam's Rest": ("Thornholm", "hill", "apple orchards and cider", False),
    "Tarnby": ("Thornholm", "lakeside", "lens grinders and glass polishers", False),
    "Fernhollow": ("Brackenmere", "valley", "its school of medicine", True),
    "Otterly": ("Brackenmere", "river", "sailcloth weaving", False),
    "Brackenmere Quay": ("Brackenmere", "harbor", "wool exports", False),
    "Dunstow": ("Brackenmere", "farming", "its cattle fairs", False),
    "Cairnloch": ("Isle of Cairnloch", "old stone", "its academy and book fair", True),
    "Greyfold": ("Isle of Cairnloch", "fishing", "its printing house", False),
    "Mistle": ("Isle of Cairnloch", "weaving", "fine patterned cloth", False),
    "Rookhaven": ("Isle of Cairnloch", "harbor", "its shipbuilders", False),
    "Port Anselm": ("Saltreach", "trading", "its merchant houses and the Tide Fair", True),
    "Shingleby": ("Saltreach", "pebble-beach", "its small presses and poets", False),
    "Coralwick": ("Saltreach", "reef", "pearl diving", False),
    "Tidewell": ("Saltreach", "salt-pan", "sea salt", False),
    "Cinderholt": ("Emberrock", "foundry", "furnaces and its institute of mechanics", True),
    "Ashby Landing": ("Emberrock", "landing", "coloured glass", False),
    "Basaltby": ("Emberrock", "quarry", "black basalt stone", False),
    "Fennwick": ("Fennwick Isle", "marsh", "its bell towers", True),
    "Reedmarsh": ("Fennwick Isle", "reed-cutting", "thatch and reed paper", False),
    "Willowstead": ("Fennwick Isle", "orchard", "honey and beekeeping", False),
    "Gullhaven Harbor": ("Gullhaven", "harbor", "its harbor pilots and Gull Day", True),
    "Skerrick": ("Gullhaven", "fishing", "small boatyards", False),
    "Puffin Cove": ("Gullhaven", "cove", "its puffin colonies", False),
    "Mossgard Keep": ("Mossgard", "fortress", "its great library", True),
    "Lichenby": ("Mossgard", "hill", "dyes made from lichen", False),
    "Stonewater": ("Mossgard", "mill", "water mills", False),
}

MOUNTAINS = {  # title: (island, article)
    "Mount Verity": ("Thornholm", False),
    "Hollow Crown": ("Thornholm", True),
    "Greyback Fell": ("Thornholm", False),
    "Mount Cairn": ("Isle of Cairnloch", False),
    "Emberpeak": ("Emberrock", False),
    "Mount Sable": ("Emberrock", False),
    "Brackenridge": ("Brackenmere", False),
    "Gull Tor": ("Gullhaven", False),
    "Mossback Hill": ("Mossgard", False),
    "Saltreach Heights": ("Saltreach", True),
}

RIVERS = {  # title: (island, source mountain or None, towns it flows through)
    "Ashwater River": ("Thornholm", "Mount Verity", ["Saltmere", "Wrenford"]),
    "River Tamsin": ("Thornholm", "Greyback Fell", ["Hollowmouth", "Lowbridge"]),
    "Kestrel Run": ("Thornholm", "Hollow Crown", ["Kestrel Point", "Tarnby"]),
    "Cairn River": ("Isle of Cairnloch", "Mount Cairn", ["Cairnloch", "Greyfold"]),
    "Cinder Brook": ("Emberrock", "Emberpeak", ["Cinderholt", "Ashby Landing"]),
    "Fenwater": ("Brackenmere", "Brackenridge", ["Fernhollow", "Otterly"]),
    "Reedwind River": ("Fennwick Isle", None, ["Fennwick", "Reedmarsh"]),
    "Gullstream": ("Gullhaven", "Gull Tor", ["Skerrick"]),
    "Mossrill": ("Mossgard", "Mossback Hill", ["Stonewater", "Lichenby"]),
    "Shingle Water": ("Saltreach", "Saltreach Heights", ["Shingleby", "Tidewell"]),
}

LAKES = {
    "Saltmere Bay": ("Thornholm", "a sheltered bay whose calm water gave the town of Saltmere its name"),
    "Glasswater Lake": ("Thornholm", "a clear lake beside Tarnby whose sand is prized by lens grinders"),
    "Lake Orla": ("Isle of Cairnloch", "a deep loch ringed with standing stones"),
    "Brinewell Lagoon": ("Saltreach", "a shallow lagoon whose evaporating water leaves thick crusts of salt"),
}

# ---------------------------------------------------------------------------------------------
# Organisations: title -> (category, town, article, what it is, craft noun for members)
# ---------------------------------------------------------------------------------------------
GUILDS = {
    "Lanternwright Guild": ("Saltmere", "the order of lamp makers who light the harbors of the isles", "lamp maker"),
    "Cartographers' Circle": ("Wrenford", "a fellowship of mapmakers and surveyors", "mapmaker"),
    "Tidecallers' Guild": ("Port Anselm", "a guild of sailors who read and predict the tides", "tide reader"),
    "Brotherhood of the Bell": ("Fennwick", "a society of bell founders and bell ringers", "bell ringer"),
    "Glassblowers' Guild": ("Cinderholt", "the guild of glassblowers of Emberrock", "glassblower"),
    "Order of the Green Lamp": ("Hollowmouth", "a society of healers and herbalists", "healer"),
    "Society of Tide Observers": ("Cairnloch", "a learned society that keeps records of tides and weather", "tide observer"),
    "Ropemakers' Union": ("Lowbridge", "the union of rope and cable makers", "ropemaker"),
    "Harbor Pilots' League": ("Gullhaven Harbor", "the league of pilots who guide ships into difficult harbors", "harbor pilot"),
    "Beekeepers' Fellowship": ("Willowstead", "a fellowship of beekeepers and mead makers", "beekeeper"),
    "Weavers of Mistle": ("Mistle", "a weaving guild famous for patterned cloth", "weaver"),
    "Lightkeepers' Assembly": ("Kestrel Point", "the assembly of lighthouse keepers", "lighthouse keeper"),
    "Stonecutters' Guild": ("Basaltby", "the guild of quarrymen and stone carvers", "stonecutter"),
}
PRESSES = {
    "Copper Quill Press": ("Ambergate", "a publisher of almanacs, charts and memoirs"),
    "Saltmere Gazette": ("Saltmere", "the oldest newspaper and publishing house of the isles"),
    "Greyfold Printing House": ("Greyfold", "a printing house known for histories and chronicles"),
}
COMPANIES = {  # title: (town, article, trade)
    "Hale Shipyards": ("Wrenford", False, "a shipbuilding company"),
    "Rookhaven Shipbuilders": ("Rookhaven", False, "a shipbuilding company known for fast merchant ships"),
    "Skerrick Boatworks": ("Skerrick", False, "a boatyard building sturdy fishing and pilot boats"),
    "Tarnby Lensworks": ("Tarnby", False, "a workshop that grinds lenses and builds optical instruments"),
    "Ambergate Clockworks": ("Ambergate", False, "a company of clockmakers and instrument makers"),
    "Cinderholt Foundry": ("Cinderholt", False, "an iron and brass foundry"),
    "Emberglass Works": ("Ashby Landing", False, "a glassworks making lenses, mirrors and coloured glass"),
    "Port Anselm Trading Company": ("Port Anselm", True, "a merchant company trading salt, pearls and cloth"),
    "Otterly Sailcloth Company": ("Otterly", True, "a maker of sailcloth and rigging"),
    "Marsh & Daughters Ropeworks": ("Lowbridge", False, "a family ropeworks"),
    "Coralwick Pearl Company": ("Coralwick", True, "a company of pearl divers and jewellers"),
    "Stonewater Mill Company": ("Stonewater", True, "a company running water mills and presses"),
}
ACADEMIES = {
    "Saltmere Academy of Navigation": ("Saltmere", "a school for navigators, pilots and captains"),
    "Cairnloch Academy": ("Cairnloch", "the oldest academy of the isles, devoted to history and law"),
    "Wrenford College of Natural Philosophy": ("Wrenford", "a college of astronomy, chemistry and natural history"),
    "Fernhollow School of Medicine": ("Fernhollow", "a school for physicians and apothecaries"),
    "Cinderholt Institute of Mechanics": ("Cinderholt", "an institute teaching engineering and mechanics"),
    "Mossgard Library": ("Mossgard Keep", "a great library and reading school inside the walls of Mossgard Keep"),
}
SHIPBUILDERS = ["Hale Shipyards", "Rookhaven Shipbuilders", "Skerrick Boatworks"]

SHIPS = [
    "Gray Heron", "Lantern's Promise", "Tidecaller", "Saltmere Star", "Wandering Gull", "Sea Thistle",
    "Northern Lark", "Long Shadow", "Brass Kestrel", "Fair Otter", "Verdant Dawn", "Quiet Mariner",
    "Storm Petrel", "Silver Reed", "Amber Wake", "Moss Rose", "Cinder Queen", "Wren's Errand",
    "Coral Hart", "Stonebreaker", "Mistral", "Pellam's Hope", "Morning Tern", "Saltreach Rover",
]
INVENTIONS = {  # title: what it does
    "Everburning Lantern": "a harbor lantern whose oil chamber refills from a reservoir so it burns through the longest night",
    "Tide Clock": "a clock whose second dial tracks the rise and fall of the tide",
    "Kestrel Telescope": "a light brass telescope used by lookouts and astronomers",
    "Weather Bell": "a bell whose tone changes as the air grows damp, warning of storms",
    "Fogcutter Horn": "a horn whose low note carries far through fog",
    "Rope Winch": "a geared winch that lets one sailor haul heavy lines",
    "Mapping Table": "a drafting table with sliding rulers for copying charts at any scale",
    "Pearl Lens": "a small lens of very clear glass used in instruments",
    "Saltwater Still": "a still that turns seawater into drinking water",
    "Glass Compass": "a compass sealed in a glass globe of oil",
    "Paddle Pump": "a pump worked by a paddle wheel in a stream",
    "Copper Diving Helm": "a helmet that lets pearl divers breathe under water",
    "Reed Loom": "a loom for weaving reed into mats and paper",
    "Heron Kite": "a large kite used to lift signal flags",
    "Signal Mirror": "a mirror for flashing messages between ships",
    "Ember Stove": "a small iron stove that burns very little fuel",
    "Depth Sounder": "a weighted line and dial for measuring the depth of water",
    "Lantern Buoy": "a floating lamp that marks dangerous rocks",
    "Sail Reefing Gear": "a set of pulleys for shortening sail quickly in a gale",
    "Harbor Crane": "a treadwheel crane for lifting cargo onto ships",
    "Wind Organ": "an organ played by the wind on a hilltop",
    "Lichen Ink": "a blue ink made from Mossgard lichen",
    "Salt Press": "a press that shapes sea salt into blocks",
    "Storm Glass": "a sealed glass of crystals said to cloud before bad weather",
}
BOOKS = {  # title: what the book is about
    "The Gray Heron": "Gray Heron",
    "A Chart of the Verdant Isles": ARCHIPELAGO,
    "On Tides and Their Keeping": "Tide Clock",
    "Lanterns of the Long Night": "Festival of Lanterns",
    "Songs of Fennwick": "Fennwick",
    "Birds of Gullhaven": "Gullhaven",
    "A Natural History of Mossgard": "Mossgard",
    "The Hollow Crown Chronicle": "Hollow Crown",
    "Herbal of Fernhollow": "Fernhollow",
    "The Salt Ledger": "Port Anselm Trading Company",
    "Notes on the Cinder Brook": "Cinder Brook",
    "The Cartographer's Daughter": "Cartographers' Circle",
    "The Founding of Saltmere": "Saltmere",
    "Letters from Kestrel Point": "Kestrel Point",
    "The Ropewalk": "Ropemakers' Union",
    "Lenses and Light": "Pearl Lens",
    "A Treatise on the Weather Bell": "Weather Bell",
    "The Ember Years": "Emberrock",
    "Voyages of the Northern Lark": "Northern Lark",
    "The Quiet Mariner's Log": "Quiet Mariner",
    "Stones of Basaltby": "Basaltby",
    "Mapping the Reef": "Coralwick",
    "The Storm Year": "Great Storm of 412",
    "A History of Thornholm": "Thornholm",
    "Orchards of Thornholm": "Thornholm",
}
FESTIVALS = {  # title: (town or island, article)
    "Festival of Lanterns": ("Saltmere", True),
    "Tide Fair": ("Port Anselm", True),
    "Heron Regatta": ("Wrenford", True),
    "Ember Night": ("Cinderholt", False),
    "Harvest of Reeds": ("Reedmarsh", True),
    "Bellringers' Feast": ("Fennwick", True),
    "Gull Day": ("Gullhaven Harbor", False),
    "Moss Moot": ("Mossgard Keep", True),
    "Midsummer Sail": ("Kestrel Point", True),
    "Cairnloch Book Fair": ("Cairnloch", True),
    "Festival of the First Landing": ("Thornholm", True),
}
EVENTS = {
    "Great Storm of 412": "a great storm that flooded harbors and sank ships across the isles in the year 412",
    "Siege of Mossgard Keep": "a long siege of the fortress town of Mossgard Keep, remembered in songs",
    "Treaty of Lowbridge": "the treaty that ended the salt quarrel between Saltreach and Thornholm",
    "Founding of the Verdant Council": "the gathering at which the islands agreed to share one council",
    "Wreck of the Amber Wake": "the loss of the merchant ship Amber Wake on the rocks off Skerrick",
}

# ---------------------------------------------------------------------------------------------
# Core people: title -> (description, [(kind, target), ...])
# ---------------------------------------------------------------------------------------------
CORE_PEOPLE: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "Mara Quell": ("Mara Quell is a lamp maker and sea captain who founded the Lanternwright Guild. "
                   "Her Everburning Lantern made the harbors of the isles safe at night.",
                   [("born_in", "Tarnby"), ("founded", "Lanternwright Guild"), ("founded", "Festival of Lanterns"),
                    ("invented", "Everburning Lantern"), ("captained", "Lantern's Promise"),
                    ("mentor_of", "Ivo Brask"), ("mentor_of", "Sella Dunmore"),
                    ("studied_at", "Saltmere Academy of Navigation")]),
    "Marius Quell": ("Marius Quell is the brother of Mara Quell and a printer who founded the Saltmere Gazette.",
                     [("born_in", "Tarnby"), ("sibling_of", "Mara Quell"), ("founded", "Saltmere Gazette")]),
    "Ivo Brask": ("Ivo Brask is a lamp maker turned sea captain, best known as master of the Gray Heron "
                  "and author of a book about her voyages.",
                  [("born_in", "Otterly"), ("member_of", "Lanternwright Guild"), ("captained", "Gray Heron"),
                   ("wrote", "The Gray Heron")]),
    "Sella Dunmore": ("Sella Dunmore is a lamp maker and writer who now heads the Lanternwright Guild.",
                      [("born_in", "Saltmere"), ("leads", "Lanternwright Guild"),
                       ("wrote", "Lanterns of the Long Night")]),
    "Mara Quill": ("Mara Quill is a weaver and songwriter from the Isle of Cairnloch, not to be confused "
                   "with the lamp maker Mara Quell.",
                   [("born_in", "Greyfold"), ("member_of", "Weavers of Mistle"), ("wrote", "Songs of Fennwick")]),
    "Oswin Hale": ("Oswin Hale is a mapmaker and shipbuilder who founded both the Cartographers' Circle "
                   "and Hale Shipyards.",
                   [("born_in", "Wrenford"), ("founded", "Cartographers' Circle"), ("founded", "Hale Shipyards"),
                    ("wrote", "A Chart of the Verdant Isles"), ("sibling_of", "Liesel Hale")]),
    "Liesel Hale": ("Liesel Hale is an engineer who runs Hale Shipyards, the company her brother founded.",
                    [("born_in", "Wrenford"), ("leads", "Hale Shipyards"), ("invented", "Mapping Table"),
                     ("studied_at", "Wrenford College of Natural Philosophy")]),
    "Ysolde Marr": ("Ysolde Marr is a sea captain and tide reader who founded the Tidecallers' Guild.",
                    [("born_in", "Coralwick"), ("founded", "Tidecallers' Guild"), ("captained", "Tidecaller"),
                     ("mentor_of", "Teodor Ashgrove")]),
    "Teodor Ashgrove": ("Teodor Ashgrove is a clockmaker and tide scholar, the inventor of the Tide Clock.",
                        [("born_in", "Mistle"), ("invented", "Tide Clock"),
                         ("studied_at", "Saltmere Academy of Navigation"), ("wrote", "On Tides and Their Keeping")]),
    "Corin Vell": ("Corin Vell is an instrument maker from Emberrock who designed the Kestrel Telescope.",
                   [("born_in", "Cinderholt"), ("invented", "Kestrel Telescope"),
                    ("studied_at", "Cinderholt Institute of Mechanics"), ("mentor_of", "Hestia Rook")]),
    "Pell Ardent": ("Pell Ardent is a lens grinder and merchant who founded Tarnby Lensworks.",
                    [("born_in", "Tarnby"), ("founded", "Tarnby Lensworks")]),
    "Hestia Rook": ("Hestia Rook is a lighthouse keeper and inventor who founded the Lightkeepers' Assembly.",
                    [("born_in", "Rookhaven"), ("invented", "Fogcutter Horn"), ("founded", "Lightkeepers' Assembly")]),
    "Bram Tolliver": ("Bram Tolliver is a merchant captain who founded the Port Anselm Trading Company.",
                      [("born_in", "Port Anselm"), ("founded", "Port Anselm Trading Company"),
                       ("captained", "Saltmere Star")]),
    "Edric Fenn": ("Edric Fenn is a bell founder from Fennwick who founded the Brotherhood of the Bell.",
                   [("born_in", "Fennwick"), ("founded", "Brotherhood of the Bell"), ("invented", "Weather Bell")]),
    "Aldous Crane": ("Aldous Crane is a healer and chronicler who founded the Order of the Green Lamp.",
                     [("born_in", "Hollowmouth"), ("founded", "Order of the Green Lamp"),
                      ("wrote", "The Hollow Crown Chronicle")]),
    "Wynne Calder": ("Wynne Calder is a harbor pilot, captain and bird watcher who grew up in Kestrel Point "
                     "and made her name in the waters of Gullhaven.",
                     [("born_in", "Kestrel Point"), ("founded", "Harbor Pilots' League"),
                      ("captained", "Wandering Gull"), ("wrote", "Birds of Gullhaven")]),
    "Rowan Thistle": ("Rowan Thistle is a naturalist and librarian who founded the Mossgard Library.",
                      [("born_in", "Mossgard Keep"), ("founded", "Mossgard Library"),
                       ("wrote", "A Natural History of Mossgard")]),
    "Tobin Marsh": ("Tobin Marsh is a ropemaker from Lowbridge who founded Marsh & Daughters Ropeworks.",
                    [("born_in", "Lowbridge"), ("founded", "Marsh & Daughters Ropeworks"), ("invented", "Rope Winch"),
                     ("member_of", "Ropemakers' Union")]),
    "Tobias Marsh": ("Tobias Marsh is a sea captain from Brackenmere, unrelated to the ropemaker Tobin Marsh.",
                     [("born_in", "Dunstow"), ("captained", "Sea Thistle")]),
    "Nerys Oakhollow": ("Nerys Oakhollow is a physician and herbalist who founded the Fernhollow School of Medicine.",
                        [("born_in", "Fernhollow"), ("founded", "Fernhollow School of Medicine"),
                         ("wrote", "Herbal of Fernhollow")]),
    "Jory Pennant": ("Jory Pennant is a veteran captain from Kestrel Point and a teacher of young sailors.",
                     [("born_in", "Kestrel Point"), ("captained", "Northern Lark"), ("mentor_of", "Daven Pike")]),
    "Daven Pike": ("Daven Pike is a captain whose ship, the Long Shadow, was lost in the Great Storm of 412.",
                   [("born_in", "Skerrick"), ("captained", "Long Shadow")]),
    "Isolde Varga": ("Isolde Varga is a scholar of tides and books who founded the Society of Tide Observers.",
                     [("born_in", "Cairnloch"), ("founded", "Society of Tide Observers"),
                      ("founded", "Cairnloch Book Fair"), ("studied_at", "Cairnloch Academy")]),
    "Gideon Ashe": ("Gideon Ashe is a glassmaker who founded Emberglass Works.",
                    [("born_in", "Ashby Landing"), ("founded", "Emberglass Works"), ("invented", "Pearl Lens"),
                     ("member_of", "Glassblowers' Guild")]),
    "Orla Brightwater": ("Orla Brightwater is a clockmaker who founded Ambergate Clockworks.",
                         [("born_in", "Ambergate"), ("founded", "Ambergate Clockworks")]),
    "Cassia Lorne": ("Cassia Lorne is a poet and publisher who founded the Copper Quill Press.",
                     [("born_in", "Shingleby"), ("founded", "Copper Quill Press")]),
    "Anselm Vey": ("Anselm Vey is the legendary merchant who founded the trading town of Port Anselm.",
                   [("born_on", "Saltreach"), ("founded_town", "Port Anselm")]),
    "Pellam Grey": ("Pellam Grey is the orchard keeper remembered as the founder of Pellam's Rest.",
                    [("born_on", "Thornholm"), ("founded_town", "Pellam's Rest")]),
    "Halden Roe": ("Halden Roe is the statesman who founded the Verdant Council and served as its first speaker.",
                   [("born_in", "Saltmere"), ("founded", "Verdant Council"),
                    ("took_part_in", "Founding of the Verdant Council")]),
    "Ilse Varrow": ("Ilse Varrow is the present speaker of the Verdant Council.",
                    [("born_in", "Wrenford"), ("leads", "Verdant Council"), ("studied_at", "Cairnloch Academy")]),
    "Orrin Vale": ("Orrin Vale is an old lighthouse keeper of Saltmere.",
                   [("born_in", "Saltmere"), ("member_of", "Lightkeepers' Assembly")]),
}

FIRST_NAMES = [
    "Alden", "Brisa", "Cael", "Dessa", "Emrys", "Fiora", "Galen", "Hollis", "Imra", "Jessamy",
    "Kellan", "Lirra", "Maddock", "Nell", "Osric", "Perrin", "Quenna", "Rhosyn", "Sorrel", "Tamsin",
    "Ulric", "Verity", "Wystan", "Yara", "Zeph", "Ansel", "Bryony", "Corwin", "Delphine", "Esker",
]
SURNAMES = [
    "Tallow", "Ferrow", "Greaves", "Holt", "Inchcape", "Jessop", "Kettering", "Lark", "Mallory", "Norcross",
    "Oakes", "Pryor", "Quarrie", "Redfern", "Sallow", "Thorne", "Underhill", "Vance", "Whitlow", "Yelland",
    "Ashdown", "Brine", "Coldwell", "Dray", "Ember",
]
N_FILLER = 92


def build_world() -> World:
    w = World()
    rng = w.rng
    # -- geography
    w.add(ARCHIPELAGO, "GEO", "archipelago",
          "The Verdant Isles are an archipelago of eight inhabited islands joined by trade, shared festivals "
          "and the Verdant Council. Saltmere on Thornholm is their capital.", article=True)
    for isle, what in ISLANDS.items():
        art = isle.startswith("Isle of")
        w.add(isle, "GEO", "island", f"{'The ' + isle if art else isle} is {what}.", article=art)
        w.link("island_of", isle, ARCHIPELAGO)
    for town, (isle, adj, known, capital) in TOWNS.items():
        desc = f"{town} is {'an' if adj[0] in 'aeiou' else 'a'} {adj} town on the island of {isle}, known for {known}."
        if capital:
            desc += f" It is the capital of {isle}."
        w.add(town, "GEO", "town", desc, island=isle, capital=capital)
        # GraphRAG merges all facts about one (source, target) pair into one relationship, so a
        # capital's "is the capital of" is folded into its "located on" edge
        w.link("located_on", town, isle)
    w.link("capital_of", "Saltmere", ARCHIPELAGO)
    for m, (isle, art) in MOUNTAINS.items():
        w.add(m, "GEO", "mountain", f"{'The ' + m if art else m} is a mountain on {isle}.", article=art, island=isle)
        w.link("mountain_on", m, isle)
    for r, (isle, src, towns) in RIVERS.items():
        through = " and ".join(towns)
        w.add(r, "GEO", "river", f"The {r} is a river of {isle} that flows through {through}.", article=True,
              island=isle)
        w.link("river_on", r, isle)
        if src:
            w.link("rises_on", r, src)
        for t in towns:
            w.link("flows_through", r, t)
    for lake, (isle, what) in LAKES.items():
        w.add(lake, "GEO", "lake", f"{lake} is {what}.", island=isle)
        w.link("lake_on", lake, isle)

    # -- organisations
    w.add("Verdant Council", "ORGANIZATION", "council",
          "The Verdant Council is the governing council of the Verdant Isles, meeting in Saltmere.", article=True)
    w.link("hq_in", "Verdant Council", "Saltmere")
    for isle in ISLANDS:
        w.link("governs", "Verdant Council", isle)
    for g, (town, what, craft) in GUILDS.items():
        w.add(g, "ORGANIZATION", "guild", f"The {g} is {what}, headquartered in {town}.", article=True, craft=craft)
        w.link("hq_in", g, town)
    for p, (town, what) in PRESSES.items():
        w.add(p, "ORGANIZATION", "press", f"The {p} is {what}, based in {town}.", article=True)
        w.link("hq_in", p, town)
    for c, (town, art, what) in COMPANIES.items():
        w.add(c, "ORGANIZATION", "company", f"{'The ' + c if art else c} is {what} based in {town}.", article=art)
        w.link("hq_in", c, town)
    for a, (town, what) in ACADEMIES.items():
        w.add(a, "ORGANIZATION", "academy", f"The {a} is {what} in {town}.", article=True)
        w.link("located_in", a, town)

    # -- events and festivals
    for f, (place, art) in FESTIVALS.items():
        w.add(f, "EVENT", "festival", None, article=art, place=place)
        w.link("held_on" if place in ISLANDS else "held_in", f, place)
    for ev, what in EVENTS.items():
        w.add(ev, "EVENT", "event", f"The {ev} was {what}.", article=True)
    w.link("struck", "Great Storm of 412", "Thornholm")
    w.link("struck", "Great Storm of 412", "Brackenmere")
    w.link("struck", "Great Storm of 412", "Gullhaven")
    w.link("took_place_in", "Siege of Mossgard Keep", "Mossgard Keep")
    w.link("took_place_in", "Treaty of Lowbridge", "Lowbridge")
    w.link("took_place_in", "Founding of the Verdant Council", "Saltmere")
    w.link("took_place_in", "Wreck of the Amber Wake", "Skerrick")

    # -- artifacts
    for s in SHIPS:
        w.add(s, "ARTIFACT", "ship", None, article=True)
    for inv, what in INVENTIONS.items():
        w.add(inv, "ARTIFACT", "invention", f"The {inv} is {what}.", article=True)
    for b in BOOKS:
        w.add(b, "WORK", "book", None)

    # -- core people
    for name, (desc, facts) in CORE_PEOPLE.items():
        w.add(name, "PERSON", "person", desc, core=True)
    for name, (desc, facts) in CORE_PEOPLE.items():
        for kind, target in facts:
            w.link(kind, name, target)

    # -- fixed object facts the questions rely on
    ship_facts = {  # ship: (builder, home port)
        "Gray Heron": ("Rookhaven Shipbuilders", "Saltmere"),
        "Lantern's Promise": ("Hale Shipyards", "Kestrel Point"),
        "Tidecaller": ("Skerrick Boatworks", "Port Anselm"),
        "Saltmere Star": ("Hale Shipyards", "Saltmere"),
        "Wandering Gull": ("Skerrick Boatworks", "Gullhaven Harbor"),
        "Northern Lark": ("Rookhaven Shipbuilders", "Kestrel Point"),
        "Long Shadow": ("Skerrick Boatworks", "Skerrick"),
        "Amber Wake": ("Hale Shipyards", "Port Anselm"),
    }
    ports = [t for t, v in TOWNS.items() if v[1] in ("bustling harbor", "harbor", "trading", "fishing", "cliff-top",
                                                         "reef", "estuary", "landing", "cove", "river")]
    for s in SHIPS:
        builder, port = ship_facts.get(s, (rng.choice(SHIPBUILDERS), rng.choice(ports)))
        w.link("built_by", s, builder)
        w.link("home_port", s, port)
    w.link("lost_in", "Long Shadow", "Great Storm of 412")
    w.link("lost_in", "Amber Wake", "Wreck of the Amber Wake")

    makers = {
        "Tarnby Lensworks": ["Kestrel Telescope"],
        "Ambergate Clockworks": ["Tide Clock", "Storm Glass"],
        "Cinderholt Foundry": ["Ember Stove", "Harbor Crane"],
        "Emberglass Works": ["Pearl Lens", "Signal Mirror"],
        "Marsh & Daughters Ropeworks": ["Rope Winch"],
        "Otterly Sailcloth Company": ["Sail Reefing Gear"],
        "Stonewater Mill Company": ["Salt Press", "Paddle Pump"],
        "Coralwick Pearl Company": ["Copper Diving Helm"],
        "Port Anselm Trading Company": ["Saltwater Still"],
    }
    for maker, items in makers.items():
        for it in items:
            w.link("manufactures", maker, it)
    shown = {"Everburning Lantern": "Festival of Lanterns", "Tide Clock": "Tide Fair",
             "Kestrel Telescope": "Midsummer Sail", "Weather Bell": "Bellringers' Feast"}
    festivals_in_towns = [f for f, (p, _) in FESTIVALS.items() if p in TOWNS]
    for inv in INVENTIONS:
        if inv in shown:
            w.link("demonstrated_at", inv, shown[inv])
        elif rng.random() < 0.55:
            w.link("demonstrated_at", inv, rng.choice(festivals_in_towns))

    presses = list(PRESSES)
    for b, subject in BOOKS.items():
        w.link("about", b, subject)
        press = "Greyfold Printing House" if b == "The Hollow Crown Chronicle" else rng.choice(presses)
        w.link("published_by", b, press)

    # -- filler people
    core_names = set(CORE_PEOPLE)
    names: list[str] = []
    i = 0
    while len(names) < N_FILLER:
        n = f"{FIRST_NAMES[i % len(FIRST_NAMES)]} {SURNAMES[(i * 7 + i // len(FIRST_NAMES)) % len(SURNAMES)]}"
        if n not in core_names and n not in names:
            names.append(n)
        i += 1
    for n in names:
        w.add(n, "PERSON", "person", None, core=False)

    towns = list(TOWNS)
    town_weights = [4 if TOWNS[t][0] == "Thornholm" else 2 for t in towns]
    guilds = list(GUILDS)
    academies = list(ACADEMIES)
    for k, n in enumerate(names):
        if k % 9 == 4:
            w.link("born_on", n, "Thornholm")
        else:
            w.link("born_in", n, rng.choices(towns, weights=town_weights)[0])
        if k % 9 == 7:
            w.link("settled_on", n, "Thornholm")
        if rng.random() < 0.8:
            w.link("member_of", n, rng.choice(guilds))
        if rng.random() < 0.45:
            w.link("studied_at", n, rng.choice(academies))
    pool = list(names)
    rng.shuffle(pool)

    def take() -> str:
        return pool.pop()

    # founders for organisations still without one
    for title, e in w.entities.items():
        if e["cat"] in ("guild", "press", "company", "academy", "festival") and not w.inn(title, "founded"):
            founder = take()
            while title in w.out(founder, "studied_at"):  # nobody studies at the school they founded
                pool.insert(0, founder)
                founder = take()
            w.link("founded", founder, title)
    pool = list(names)
    rng.shuffle(pool)
    for s in SHIPS:
        if not w.inn(s, "captained"):
            w.link("captained", take(), s)
    for inv in INVENTIONS:
        if not w.inn(inv, "invented"):
            w.link("invented", take(), inv)
    pool = list(names)
    rng.shuffle(pool)
    for b in BOOKS:
        if not w.inn(b, "wrote"):
            w.link("wrote", take(), b)
    # heads of a few guilds and companies
    for title in ["Cartographers' Circle", "Tidecallers' Guild", "Glassblowers' Guild", "Harbor Pilots' League",
                  "Tarnby Lensworks", "Cinderholt Foundry", "Cairnloch Academy", "Mossgard Library"]:
        w.link("leads", take(), title)
    # mentorships among filler people (each person has at most one mentor)
    order = list(names)
    rng.shuffle(order)
    for a, b in zip(order[0::2], order[1::2]):
        if rng.random() < 0.7:
            w.link("mentor_of", a, b)
    # siblings
    for a, b in zip(order[1:24:4], order[3:24:4]):
        w.link("sibling_of", a, b)
    # participants in events
    for ev in ["Treaty of Lowbridge", "Siege of Mossgard Keep", "Founding of the Verdant Council",
               "Great Storm of 412"]:
        for p in rng.sample(names, 3):
            w.link("survived" if ev.startswith("Great Storm") else "took_part_in", p, ev)

    # -- quirks of real GraphRAG output
    # (1) two relationships whose endpoint is not an entity
    w.link("kept_light", "Orrin Vale", "Old Saltmere Lighthouse")
    w.link("sailed_through", "Captain Ysolde Marr", "Tidecaller")
    # (2) two reversed duplicates of existing edges
    w.link("trained_by", "Ivo Brask", "Mara Quell")
    w.link("home_of", "Saltmere", "Lanternwright Guild")

    describe_generated(w)
    return w


def describe_generated(w: World) -> None:
    """Descriptions for entities whose text depends on the generated facts."""
    for title, e in w.entities.items():
        if e["desc"]:
            continue
        cat = e["cat"]
        if cat == "person":
            birth = (w.out(title, "born_in") or w.out(title, "born_on"))[0]
            roles = []
            if w.out(title, "captained"):
                roles.append("sea captain")
            if w.out(title, "invented"):
                roles.append("inventor")
            if w.out(title, "wrote"):
                roles.append("writer")
            guild = w.out(title, "member_of")
            if guild:
                roles.append(w.entities[guild[0]]["craft"])
            if not roles:
                roles.append("islander")
            role = " and ".join(roles[:2])
            art = "an" if role[0] in "aeiou" else "a"
            desc = f"{title} is {art} {role} from {birth}."
            extra = []
            for kind, phrase in (("captained", "the captain of"), ("invented", "the inventor of"),
                                 ("wrote", "the author of"), ("founded", "the founder of")):
                for t in w.out(title, kind)[:1]:
                    extra.append(f"{phrase} {w.the(t)}")
            if extra:
                desc += f" {title.split()[0]} is known as {extra[0]}."
            e["desc"] = desc
        elif cat == "ship":
            builder = w.out(title, "built_by")[0]
            port = w.out(title, "home_port")[0]
            e["desc"] = f"The {title} is a sailing ship built by {w.the(builder)}, with its home port in {port}."
        elif cat == "book":
            about = w.out(title, "about")[0]
            author = w.inn(title, "wrote")[0]
            e["desc"] = f"{title} is a book by {author} about {w.the(about)}."
        elif cat == "festival":
            place = e["place"]
            where = f"across the island of {place}" if place in ISLANDS else f"in {place}"
            e["desc"] = f"{cap(w.the(title))} is a yearly festival held {where}."
        else:  # pragma: no cover - every category is described above
            raise AssertionError(f"no description for {title}")


# ---------------------------------------------------------------------------------------------
# Prose: passages (text units) that state the relationships.
# ---------------------------------------------------------------------------------------------
UNIT_GROUPS = [  # (categories, max sentences per passage)
    ("archipelago+island", 8), ("town+mountain+river+lake", 8), ("council+guild+press", 8),
    ("company+academy", 8), ("festival+event", 8), ("ship", 8), ("invention", 8), ("book", 8),
    ("person", 8),
]
# Kinds stated in the target's passage, as one sentence listing every source: (singular, plural).
LISTED_AT_TARGET = {
    "island_of": ("{L} is one of the islands of {T}.", "The islands of {T} are {L}."),
    "located_on": ("The only town on {T} is {L}.", "The towns of {T} are {L}."),
    "mountain_on": ("On {T} stands {L}.", "On {T} stand {L}."),
    "river_on": ("{L} runs across {T}.", "{L} run across {T}."),
    "lake_on": ("{L} lies on {T}.", "{L} lie on {T}."),
    "born_on": ("{L} was born on the island of {T}.", "{L} were all born on the island of {T}."),
    "settled_on": ("{L} settled on {T} late in life.", "{L} all settled on {T} late in life."),
    "member_of": ("{L} is a member of {T}.", "Members of {T} include {L}."),
}
BIRTH_LEADS = {"born_in": "Born in {T}", "born_on": "Born on the island of {T}"}


def fill(template: str, w: World, s: str | list[str], t: str | list[str]) -> str:
    def name(x: str | list[str]) -> str:
        return x if isinstance(x, str) and x not in w.entities else (
            w.the(x) if isinstance(x, str) else join_clauses([w.the(y) for y in x]))
    raw = t if isinstance(t, str) else join_clauses(t)
    return template.replace("{S}", name(s)).replace("{T}", name(t)).replace("{t}", raw)


def join_clauses(cl: list[str]) -> str:
    if len(cl) == 1:
        return cl[0]
    return ", ".join(cl[:-1]) + " and " + cl[-1]


def with_also(clause: str) -> str:
    first, _, rest = clause.partition(" ")
    return f"{first} also {rest}" if first in ("is", "was", "are") else f"also {clause}"


def subject_order(w: World, cats: list[str]) -> list[str]:
    """Subjects of one group, in a readable order (geography by island)."""
    subs = [t for t, e in w.entities.items() if e["cat"] in cats]
    if "town" in cats:
        isle_order = {isle: k for k, isle in enumerate(ISLANDS)}
        subs.sort(key=lambda t: (isle_order[w.entities[t]["island"]], cats.index(w.entities[t]["cat"])))
    return subs


def grouped(keys: list[tuple[str, int]]) -> list[tuple[str, list[int]]]:
    """[(kind, k)] -> [(kind, [k, ...])] keeping the order of first appearance."""
    out: dict[str, list[int]] = {}
    for kind, k in keys:
        out.setdefault(kind, []).append(k)
    return list(out.items())


def write_passages(w: World) -> tuple[list[str], dict[int, list[int]]]:
    """Return passages and, per relationship index, the passages that state it."""
    rels = w.rels
    fwd = defaultdict(list)  # subject -> [(kind, k)] stated from the source side
    inv = defaultdict(list)  # subject -> [(kind, k)] with an inverse clause for the target
    listed = defaultdict(list)  # subject -> [(kind, k)] listed in the target's passage
    for k, r in enumerate(rels):
        if r["kind"] in LISTED_AT_TARGET:
            listed[r["target"]].append((r["kind"], k))
        else:
            fwd[r["source"]].append((r["kind"], k))
            if KINDS[r["kind"]][2]:
                inv[r["target"]].append((r["kind"], k))
    reversed_pairs = {(r["target"], r["source"]) for r in rels if r["kind"] in REVERSED_OF}
    extra_subjects = {r["source"] for r in rels if r["source"] not in w.entities}

    def estimate(s: str) -> int:
        n_clauses = len({kd for kd, _ in fwd[s]}) + len({kd for kd, _ in inv[s]})
        natives = 2 if w.entities.get(s, {}).get("cat") == "town" else 0
        return math.ceil(n_clauses / 3) + len({kd for kd, _ in listed[s]}) + natives

    # 1) home passage of every subject, chunked by an upper-bound sentence estimate
    groups: list[list[str]] = []
    for cats_s, budget in UNIT_GROUPS:
        cats = cats_s.split("+")
        subs = subject_order(w, cats) + (sorted(extra_subjects) if "person" in cats else [])
        cur: list[str] = []
        used = 1 if not groups else 0  # the first passage opens with a scene-setting sentence
        for s in subs:
            est = estimate(s)
            if cur and used + est > budget:
                groups.append(cur)
                cur, used = [], 0
            cur.append(s)
            used += est
        if cur and used <= 1 and len(groups) > 0 and groups[-1][0] in subs:
            groups[-1].extend(cur)  # a tiny tail joins the previous passage of the same group
        elif cur:
            groups.append(cur)
    home = {s: g for g, subs in enumerate(groups) for s in subs}

    # 2) render
    stated: dict[int, list[int]] = defaultdict(list)

    def mark(ks: list[int], g: int) -> None:
        for k in ks:
            if g not in stated[k]:
                stated[k].append(g)

    passages: list[str] = []
    for g, subs in enumerate(groups):
        sentences: list[str] = []
        if g == 0:
            sentences.append("The Verdant Isles lie in a warm green sea, eight islands strung together by ferries, "
                             "trade and old friendships.")
        for s in subs:
            subj = cap(w.the(s)) if s in w.entities else s
            if w.entities.get(s, {}).get("cat") == "town":
                # the gazetteer line: also states that the town lies on its island
                sentences.append(w.entities[s]["desc"])
                mark([k for k, r in enumerate(rels) if r["kind"] == "located_on" and r["source"] == s], g)
            clauses: list[tuple[str, list[int]]] = []
            birth = None
            for kind, ks in grouped(fwd[s]):
                targets = [rels[k]["target"] for k in ks]
                if kind in BIRTH_LEADS and birth is None and len(ks) == 1:
                    birth = (fill(BIRTH_LEADS[kind], w, s, targets[0]), ks)
                    continue
                clauses.append((fill(KINDS[kind][1], w, s, targets), ks))
            for kind, ks in grouped(inv[s]):
                ks = [k for k in ks if home.get(rels[k]["source"]) != g
                      and (rels[k]["source"], rels[k]["target"]) not in reversed_pairs]
                if ks:
                    clauses.append((fill(KINDS[kind][2], w, [rels[k]["source"] for k in ks], s), ks))
            if birth and not clauses:
                clauses.append((fill(KINDS["born_in" if birth[0].startswith("Born in") else "born_on"][1], w, s,
                                     rels[birth[1][0]]["target"]), birth[1]))
                birth = None
            for start in range(0, len(clauses), 3):
                chunk = clauses[start:start + 3]
                texts = [c for c, _ in chunk]
                if start == 0 and birth:
                    sentences.append(f"{birth[0]}, {subj} {join_clauses(texts)}.")
                    mark(birth[1], g)
                elif start == 0:
                    sentences.append(f"{subj} {join_clauses(texts)}.")
                else:
                    sentences.append(f"{subj} {with_also(texts[0])}"
                                     f"{', ' if len(texts) > 2 else ' and ' if len(texts) == 2 else ''}"
                                     f"{join_clauses(texts[1:]) if len(texts) > 1 else ''}.")
                for _, ks in chunk:
                    mark(ks, g)
            for kind, ks in grouped(listed[s]):
                single, plural = LISTED_AT_TARGET[kind]
                names = join_clauses([w.the(rels[k]["source"]) for k in ks])
                text = (single if len(ks) == 1 else plural).replace("{L}", names).replace("{T}", w.the(s))
                sentences.append(cap(text))
                mark(ks, g)
            if w.entities.get(s, {}).get("cat") == "town":
                natives = [k for k in range(len(rels)) if rels[k]["kind"] == "born_in" and rels[k]["target"] == s
                           and home.get(rels[k]["source"]) != g][:4]
                if natives:
                    who = join_clauses([rels[k]["source"] for k in natives])
                    sentences.append(f"{s} is the birthplace of {who}.")
                    mark(natives, g)
        passages.append(" ".join(sentences))
    return passages, stated


# ---------------------------------------------------------------------------------------------
# Questions (gold answers are recomputed from the relationships and must match)
# ---------------------------------------------------------------------------------------------
QUESTIONS = [
    ("Who founded the Lanternwright Guild?", "Lanternwright Guild", [("founded", "<")], ["Mara Quell"]),
    ("Which ship did Ivo Brask captain?", "Ivo Brask", [("captained", ">")], ["Gray Heron"]),
    ("In which town is the Tide Fair held?", "Tide Fair", [("held_in", ">")], ["Port Anselm"]),
    ("Who invented the Tide Clock?", "Tide Clock", [("invented", "<")], ["Teodor Ashgrove"]),
    ("In which town was the founder of the Lanternwright Guild born?", "Lanternwright Guild",
     [("founded", "<"), ("born_in", ">")], ["Tarnby"]),
    ("Which ship was captained by the mentor of Ivo Brask?", "Ivo Brask",
     [("mentor_of", "<"), ("captained", ">")], ["Lantern's Promise"]),
    ("In which town was the mentor of Teodor Ashgrove born?", "Teodor Ashgrove",
     [("mentor_of", "<"), ("born_in", ">")], ["Coralwick"]),
    ("Which river flows through the town where Oswin Hale was born?", "Oswin Hale",
     [("born_in", ">"), ("flows_through", "<")], ["Ashwater River"]),
    ("Who is the sibling of the founder of the Lanternwright Guild?", "Lanternwright Guild",
     [("founded", "<"), ("sibling_of", "<")], ["Marius Quell"]),
    ("Which company manufactures the invention of Corin Vell?", "Corin Vell",
     [("invented", ">"), ("manufactures", "<")], ["Tarnby Lensworks"]),
    ("Which company built the ship captained by Ivo Brask?", "Ivo Brask",
     [("captained", ">"), ("built_by", ">")], ["Rookhaven Shipbuilders"]),
    ("On which island was the founder of the Lanternwright Guild born?", "Lanternwright Guild",
     [("founded", "<"), ("born_in", ">"), ("located_on", ">")], ["Thornholm"]),
    ("Who founded the company that manufactures the invention of Corin Vell?", "Corin Vell",
     [("invented", ">"), ("manufactures", "<"), ("founded", "<")], ["Pell Ardent"]),
    ("On which island is the home port of the ship captained by Wynne Calder?", "Wynne Calder",
     [("captained", ">"), ("home_port", ">"), ("located_on", ">")], ["Gullhaven"]),
    ("Who published the book written by the founder of the Order of the Green Lamp?", "Order of the Green Lamp",
     [("founded", "<"), ("wrote", ">"), ("published_by", ">")], ["Greyfold Printing House"]),
    ("At which festival was the invention of the founder of the Brotherhood of the Bell first demonstrated?",
     "Brotherhood of the Bell", [("founded", "<"), ("invented", ">"), ("demonstrated_at", ">")],
     ["Bellringers' Feast"]),
    ("In which town is the guild founded by the mentor of Teodor Ashgrove headquartered?", "Teodor Ashgrove",
     [("mentor_of", "<"), ("founded", ">"), ("hq_in", ">")], ["Port Anselm"]),
]


def solve(w: World, topic: str, path: list[tuple[str, str]]) -> list[list[int]]:
    """All relationship paths (as rel index lists) following `path` from `topic`; canonical edges only."""
    paths = [([], topic)]
    for kind, direction in path:
        nxt = []
        for used, node in paths:
            for k, r in enumerate(w.rels):
                if r["kind"] != kind:
                    continue
                if direction == ">" and r["source"] == node:
                    nxt.append((used + [k], r["target"]))
                elif direction == "<" and r["target"] == node:
                    nxt.append((used + [k], r["source"]))
        paths = nxt
    return [p for p, _ in paths]


def make_questions(w: World, desc: list[str]) -> list[dict]:
    out = []
    for question, topic, path, answers in QUESTIONS:
        assert topic in w.entities, topic
        found = solve(w, topic, path)
        ends = set()
        for p in found:
            last = w.rels[p[-1]]
            ends.add(last["target"] if path[-1][1] == ">" else last["source"])
        assert sorted(ends) == sorted(answers), (question, sorted(ends), answers)
        chain = [[w.rels[k]["source"], desc[k], w.rels[k]["target"]] for k in found[0]]
        out.append({"question": question, "topic_entities": [topic], "answers": answers, "hops": len(path),
                    "chain": chain})
    return out


def check_chain_connected(q: dict) -> None:
    node = q["topic_entities"][0]
    for s, _, t in q["chain"]:
        assert node in (s, t), (q["question"], node, s, t)
        node = t if node == s else s
    assert node in q["answers"], q["question"]
    assert len(q["chain"]) == q["hops"]


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from tog_core.testing.schemas import SCHEMAS  # noqa: E402  (the GraphRAG 3.x tables)



def n_tokens(text: str) -> int:
    # rough cl100k-like estimate: about 4 characters per token
    return max(1, round(len(text) / 4))


def home_island(w: World, title: str) -> str | None:
    e = w.entities[title]
    if e["cat"] == "island":
        return title
    if "island" in e:
        return e["island"]
    for kind in ("born_in", "hq_in", "located_in", "home_port", "held_in", "took_place_in"):
        t = w.out(title, kind)
        if t and t[0] in TOWNS:
            return TOWNS[t[0]][0]
    for kind in ("born_on", "held_on"):
        t = w.out(title, kind)
        if t:
            return t[0]
    for kind in ("invented", "wrote"):
        t = w.inn(title, kind)
        if t:
            return home_island(w, t[0])
    return None


def build_tables(w: World) -> tuple[dict[str, list[dict]], list[dict], list[str]]:
    rels = w.rels
    desc = [cap(fill(CAPITAL_ON if r["kind"] == "located_on" and w.entities[r["source"]].get("capital")
                     else KINDS[r["kind"]][0], w, r["source"], r["target"])) for r in rels]
    passages, stated = write_passages(w)
    unit_ids = [sha512(p) for p in passages]
    doc_text = "\n\n".join(passages)
    doc_id = sha512(doc_text)

    degree = defaultdict(int)
    for r in rels:
        degree[r["source"]] += 1
        degree[r["target"]] += 1
    ent_ids = {t: uid("entity", t) for t in w.entities}
    rel_ids = [uid("relationship", f"{r['source']}|{r['kind']}|{r['target']}") for r in rels]

    unit_rels = defaultdict(list)
    unit_ents = defaultdict(list)
    ent_units = defaultdict(list)
    for k, r in enumerate(rels):
        assert 1 <= len(stated[k]) <= 2, (r, stated[k])
        for g in stated[k]:
            unit_rels[g].append(rel_ids[k])
            for t in (r["source"], r["target"]):
                if t in w.entities:
                    if ent_ids[t] not in unit_ents[g]:
                        unit_ents[g].append(ent_ids[t])
                    if g not in ent_units[t]:
                        ent_units[t].append(g)

    entities = []
    for hid, (t, e) in enumerate(w.entities.items()):
        units = sorted(ent_units[t])
        entities.append(dict(id=ent_ids[t], human_readable_id=hid, title=t, type=e["type"], description=e["desc"],
                             text_unit_ids=[unit_ids[g] for g in units], frequency=len(units),
                             degree=degree[t]))
    relationships = []
    for k, r in enumerate(rels):
        relationships.append(dict(id=rel_ids[k], human_readable_id=k, source=r["source"], target=r["target"],
                                  description=desc[k], weight=KINDS[r["kind"]][3],
                                  combined_degree=degree[r["source"]] + degree[r["target"]],
                                  text_unit_ids=[unit_ids[g] for g in sorted(stated[k])]))
    text_units = []
    for g, p in enumerate(passages):
        text_units.append(dict(id=unit_ids[g], human_readable_id=g, text=p, n_tokens=n_tokens(p),
                               document_id=doc_id, entity_ids=unit_ents[g], relationship_ids=unit_rels[g],
                               covariate_ids=[]))
    documents = [dict(id=doc_id, human_readable_id=1, title=DOC_TITLE, text=doc_text, text_unit_ids=unit_ids,
                      creation_date=CREATION_DATE, metadata=None)]

    # communities: one per island at level 0 (plus one for the rest); Thornholm split again at level 1
    members = defaultdict(list)
    for t in w.entities:
        members[home_island(w, t) or "(archipelago)"].append(t)
    order = list(ISLANDS) + ["(archipelago)"]
    comm_rows = []

    def community(num: int, level: int, parent: int, children: list[int], titles: list[str]) -> dict:
        tset = set(titles)
        rids = [rel_ids[k] for k, r in enumerate(rels) if r["source"] in tset and r["target"] in tset]
        units = sorted({g for t in titles for g in ent_units[t]})
        return dict(id=uid("community", str(num)), human_readable_id=num, community=num, level=level,
                    parent=parent, children=children, title=f"Community {num}",
                    entity_ids=[ent_ids[t] for t in titles], relationship_ids=rids,
                    text_unit_ids=[unit_ids[g] for g in units], period=PERIOD, size=len(titles))

    thorn = members["Thornholm"]
    people = [t for t in thorn if w.entities[t]["cat"] == "person"]
    rest = [t for t in thorn if w.entities[t]["cat"] != "person"]
    n0 = len(order)
    for num, key in enumerate(order):
        children = [n0, n0 + 1] if key == "Thornholm" else []
        comm_rows.append(community(num, 0, -1, children, members[key]))
    comm_rows.append(community(n0, 1, 0, [], rest))
    comm_rows.append(community(n0 + 1, 1, 0, [], people))

    tables = dict(entities=entities, relationships=relationships, text_units=text_units, documents=documents,
                  communities=comm_rows)
    questions = make_questions(w, desc)
    return tables, questions, passages


def check(w: World, tables: dict[str, list[dict]], questions: list[dict]) -> dict:
    ents = tables["entities"]
    rels = tables["relationships"]
    units = {u["id"]: u for u in tables["text_units"]}
    titles = {e["title"] for e in ents}
    deg = defaultdict(int)
    for r in rels:
        deg[r["source"]] += 1
        deg[r["target"]] += 1
    for e in ents:
        assert e["degree"] == deg[e["title"]] >= 1, e["title"]
        assert e["frequency"] == len(e["text_unit_ids"]) >= 1, e["title"]
        assert e["description"] and e["type"], e["title"]
    for r in rels:
        assert r["combined_degree"] == deg[r["source"]] + deg[r["target"]]
        assert 1 <= len(r["text_unit_ids"]) <= 2
        for u in r["text_unit_ids"]:
            text = units[u]["text"]
            for end in (r["source"], r["target"]):
                assert end in text, (end, r["description"], text[:80])
            assert r["id"] in units[u]["relationship_ids"]
    missing = sorted({x for r in rels for x in (r["source"], r["target"])} - titles)
    assert len(missing) == 2, missing
    pairs = {(r["source"], r["target"]) for r in rels}
    assert len(pairs) == len(rels), "parallel duplicate edges (same source and target)"
    reversed_dups = sorted((s, t) for s, t in pairs if (t, s) in pairs and s < t)
    assert len(reversed_dups) == 2, reversed_dups
    assert len({e["id"] for e in ents}) == len(ents)
    assert len({r["id"] for r in rels}) == len(rels)
    for q in questions:
        check_chain_connected(q)
        for s, d, t in q["chain"]:
            assert any(r["source"] == s and r["target"] == t and r["description"] == d for r in rels), (s, d, t)
    hops = defaultdict(int)
    for q in questions:
        hops[q["hops"]] += 1
    assert hops[2] >= 5 and hops[3] >= 3, hops
    assert deg["Thornholm"] >= 40, deg["Thornholm"]
    assert 250 <= len(ents) <= 400 and 600 <= len(rels) <= 1000, (len(ents), len(rels))
    assert 30 <= len(units) <= 60, len(units)
    return dict(entities=len(ents), relationships=len(rels), text_units=len(units),
                communities=len(tables["communities"]), questions=len(questions), hops=dict(sorted(hops.items())),
                missing_endpoints=missing, reversed_duplicates=reversed_dups,
                thornholm_degree=deg["Thornholm"],
                top_degree=sorted(((v, k) for k, v in deg.items()), reverse=True)[:5])


def write(tables: dict[str, list[dict]], questions: list[dict], passages: list[str]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        table = pa.Table.from_pylist(rows, schema=SCHEMAS[name])
        pq.write_table(table, OUT / f"{name}.parquet")
    (HERE / "input").mkdir(exist_ok=True)
    (HERE / "input" / DOC_TITLE).write_text("\n\n".join(passages) + "\n", encoding="utf-8")
    with open(HERE / "questions.jsonl", "w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")


def main(argv: list[str]) -> int:
    w = build_world()
    tables, questions, passages = build_tables(w)
    summary = check(w, tables, questions)
    if "--check" not in argv:
        write(tables, questions, passages)
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
