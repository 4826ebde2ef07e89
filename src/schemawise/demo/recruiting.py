"""The `recruiting` demo schema: assignments whose meaning lives in free text (the `sector`
column is empty on most rows), skewed across tenants, with a labelled query set generated
from the ground truth the generator knows — never from the search under test."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

SEED = 4242

# sector → (titles, companies, phrases, specialties)
SECTORS: dict[str, tuple[list[str], list[str], list[str], list[str]]] = {
    "healthcare": (
        ["Staff Nurse", "Consultant Physician", "Ward Manager", "Clinical Pharmacist",
         "Radiographer", "Physiotherapist", "Biomedical Scientist", "Registrar"],
        ["St. Mary's Hospital", "Northcare Clinics", "MediPath Labs", "Riverside Health Trust"],
        ["patient care on a busy ward", "clinical governance and audits",
         "working alongside doctors and nurses", "outpatient clinic sessions",
         "diagnostic imaging and lab results", "medication reviews with patients"],
        ["oncology", "haematology", "cardiology", "paediatrics", "radiology", "neurology"],
    ),
    "renewable energy": (
        ["Wind Turbine Technician", "Solar PV Installer", "Battery Storage Engineer",
         "Grid Integration Analyst", "Hydrogen Process Engineer", "Energy Yield Analyst"],
        ["SunGrid", "Northwind Power", "GreenVolt", "Helios Arrays"],
        ["offshore wind farm maintenance", "photovoltaic installations on commercial roofs",
         "grid-scale battery projects", "decarbonising the power sector",
         "electrolyser commissioning", "turbine blade inspections"],
        ["wind", "solar", "storage", "hydrogen"],
    ),
    "fintech": (
        ["Payments Engineer", "Fraud Analyst", "Risk Quant", "Ledger Developer",
         "AML Compliance Officer", "Card Issuing Product Owner"],
        ["Paywise", "LedgerLoop", "CoinHarbor", "Brightbank"],
        ["card payments and settlement", "anti-money laundering checks", "credit risk models",
         "open banking APIs", "real-time transaction monitoring", "digital wallets"],
        ["payments", "fraud", "crypto", "lending"],
    ),
    "logistics": (
        ["Warehouse Supervisor", "Fleet Planner", "Supply Chain Analyst", "Customs Broker",
         "Transport Manager", "Inventory Controller"],
        ["FastFreight", "Cargoline", "DepotHub", "RouteWise"],
        ["cross-docking and pallet flows", "route planning for delivery vans",
         "freight forwarding paperwork", "inventory accuracy", "forklift and picking teams"],
        ["warehousing", "freight", "customs", "fleet"],
    ),
    "education": (
        ["Secondary School Teacher", "Teaching Assistant", "University Lecturer",
         "Curriculum Designer", "Head of Year"],
        ["Oakfield Academy", "Northern University", "Bright Minds School", "LearnWell"],
        ["lesson planning", "pupils aged 11 to 16", "marking and assessment",
         "pastoral support", "exam preparation"],
        ["mathematics", "physics", "literacy", "special needs"],
    ),
    "construction": (
        ["Site Manager", "Quantity Surveyor", "Structural Engineer", "Civil Engineer",
         "Estimator"],
        ["BuildRight", "Stonegate Contractors", "Apex Civils", "Framewell"],
        ["residential building projects", "health and safety on site", "bills of quantities",
         "groundworks and foundations", "concrete frame structures"],
        ["steel", "concrete", "groundworks", "roofing"],
    ),
    "retail": (
        ["Store Manager", "Merchandiser", "E-commerce Buyer", "Visual Merchandiser",
         "Area Sales Manager"],
        ["ShopSmart", "Urban Threads", "HomeGoods Direct", "FreshMart"],
        ["footfall and conversion", "seasonal ranges", "point of sale displays",
         "stock replenishment", "customer service on the shop floor"],
        ["fashion", "grocery", "homeware", "electronics"],
    ),
    "software": (
        ["Backend Developer", "Data Engineer", "DevOps Engineer", "Frontend Developer",
         "Machine Learning Engineer"],
        ["Codecraft", "Cloudnine Systems", "Bytewise", "Stackline"],
        ["microservices in Go", "data pipelines", "Kubernetes clusters", "React applications",
         "CI/CD automation", "model training pipelines"],
        ["python", "golang", "kubernetes", "react"],
    ),
}  # fmt: skip
GENERIC = [
    "Competitive salary.", "Hybrid working.", "Immediate start.", "Full-time, permanent.",
    "Great team culture.", "Benefits package included.", "Apply with your CV.",
]  # fmt: skip
LOCATIONS = ["London", "Leeds", "Manchester", "Bristol", "Glasgow", "Cardiff", "Remote"]
STATUSES = ["open", "closed-successfully", "closed-unsuccessfully"]
# How people ask for each sector without naming the words the rows use.
PARAPHRASES = {
    "healthcare": ["healthcare", "medical jobs", "hospital and clinical roles"],
    "renewable energy": ["renewable energy", "clean energy jobs", "green power sector"],
    "fintech": ["financial technology", "fintech", "banking and payments technology"],
    "logistics": ["logistics", "supply chain and transport", "shipping and distribution"],
    "education": ["education", "teaching jobs", "schools and universities"],
    "construction": ["construction", "building industry", "civil engineering works"],
    "retail": ["retail", "shops and stores", "consumer retail jobs"],
    "software": ["software development", "programming jobs", "tech engineering roles"],
}


@dataclass
class RecruitingSizes:
    owners: int = 220
    assignments: int = 200_000
    candidates: int = 40_000
    big_owners: int = 4
    medium_owners: int = 16


@dataclass
class RecruitingData:
    tables: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    # ground truth per assignment id: (owner, sector, specialties)
    truth: dict[int, tuple[int, str, frozenset[str]]] = field(default_factory=dict)
    labels: list[dict[str, Any]] = field(default_factory=list)


def _owner_weights(sizes: RecruitingSizes) -> list[float]:
    """A few big tenants, some medium, and many holding well under 1% of the rows each."""
    weights = [0.12] * sizes.big_owners + [0.015] * sizes.medium_owners
    small = sizes.owners - len(weights)
    rest = max(0.0, 1.0 - sum(weights))
    return weights + [rest / small] * small


def generate(sizes: RecruitingSizes | None = None, seed: int = SEED) -> RecruitingData:
    sizes = sizes or RecruitingSizes()
    rng = random.Random(seed)
    data = RecruitingData()
    sectors = list(SECTORS)
    owners = [(i, f"Agency {i}") for i in range(1, sizes.owners + 1)]
    # Small tenants work in three sectors only: their other sectors have no relevant rows.
    owner_sectors = {
        owner: sectors
        if owner <= sizes.big_owners + sizes.medium_owners
        else rng.sample(sectors, 3)
        for owner, _ in owners
    }
    companies: list[tuple[int, str, str]] = []
    company_ids: dict[str, list[int]] = defaultdict(list)
    for sector in sectors:
        for name in SECTORS[sector][1]:
            companies.append((len(companies) + 1, name, sector))
            company_ids[sector].append(len(companies))
    weights = _owner_weights(sizes)
    owner_ids = [o for o, _ in owners]
    start = datetime(2023, 1, 1, tzinfo=UTC)
    assignments = []
    for aid in range(1, sizes.assignments + 1):
        owner = rng.choices(owner_ids, weights)[0]
        sector = rng.choice(owner_sectors[owner])
        titles, _, phrases, specialties = SECTORS[sector]
        chosen = frozenset(rng.sample(specialties, rng.choice([1, 1, 2])))
        company = rng.choice(company_ids[sector])
        description = " ".join(
            [
                f"{rng.choice(phrases).capitalize()}.",
                f"Experience in {' and '.join(sorted(chosen))} required.",
                f"Client: {companies[company - 1][1]}." if rng.random() < 0.3 else "",
                rng.choice(GENERIC),
            ]
        ).replace("  ", " ")
        status = rng.choice(STATUSES)
        created = start + timedelta(days=rng.randint(0, 900))
        closed = created + timedelta(days=rng.randint(5, 120)) if status != "open" else None
        assignments.append(
            (aid, owner, rng.choice(titles), company, sector if rng.random() < 0.2 else None,
             rng.choice(LOCATIONS), description, status, created, closed)
        )  # fmt: skip
        data.truth[aid] = (owner, sector, chosen)
    candidates = []
    for cid in range(1, sizes.candidates + 1):
        owner = rng.choices(owner_ids, weights)[0]
        sector = rng.choice(owner_sectors[owner])
        titles, _, phrases, specialties = SECTORS[sector]
        picked = rng.sample(specialties, 2)
        candidates.append(
            (cid, owner, f"Candidate {cid}", rng.choice(titles),
             f"{rng.randint(2, 20)} years in {picked[0]} and {picked[1]}; {rng.choice(phrases)}.")
        )  # fmt: skip
    data.tables = {
        "recruiting.owners": owners,
        "recruiting.companies": companies,
        "recruiting.assignments": assignments,
        "recruiting.candidates": candidates,
    }
    data.labels = _labels(data, sizes, owner_sectors, rng)
    return data


def _labels(
    data: RecruitingData,
    sizes: RecruitingSizes,
    owner_sectors: dict[int, list[str]],
    rng: random.Random,
) -> list[dict[str, Any]]:
    by_owner: dict[int, list[int]] = defaultdict(list)
    for aid, (owner, _, _) in data.truth.items():
        by_owner[owner].append(aid)
    big = list(range(1, sizes.big_owners + sizes.medium_owners + 1))
    small = [o for o in range(big[-1] + 1, sizes.owners + 1) if by_owner[o]]
    picked = big + rng.sample(small, min(40, len(small)))
    labels = []
    for owner in picked:
        rows = by_owner[owner]
        for sector in rng.sample(owner_sectors[owner], min(2, len(owner_sectors[owner]))):
            relevant = [a for a in rows if data.truth[a][1] == sector]
            labels.append(_label("semantic", owner, rng.choice(PARAPHRASES[sector]), relevant))
        absent = [s for s in SECTORS if s not in owner_sectors[owner]]
        if absent:
            labels.append(_label("none", owner, rng.choice(PARAPHRASES[rng.choice(absent)]), []))
        sector = rng.choice(owner_sectors[owner])
        specialties = SECTORS[sector][3]
        terms = rng.sample(specialties, rng.choice([1, 2]))
        relevant = [a for a in rows if set(terms) <= data.truth[a][2]]
        if relevant:
            labels.append(_label("exact", owner, " and ".join(terms), relevant))
    for number, label in enumerate(labels, 1):
        label["id"] = number
    return labels


def _label(kind: str, owner: int, query: str, relevant: list[int]) -> dict[str, Any]:
    return {"kind": kind, "owner_id": owner, "query": query, "relevant": sorted(relevant)}


SCHEMA_SQL = """
DROP SCHEMA IF EXISTS recruiting CASCADE;
CREATE SCHEMA recruiting;
CREATE TABLE recruiting.owners (owner_id integer PRIMARY KEY, name text NOT NULL);
COMMENT ON TABLE recruiting.owners IS 'Tenants: recruitment agencies. Every other table belongs to one.';
CREATE TABLE recruiting.companies (
    company_id integer PRIMARY KEY, name text NOT NULL, industry text NOT NULL);
CREATE TABLE recruiting.assignments (
    assignment_id integer PRIMARY KEY,
    owner_id integer NOT NULL REFERENCES recruiting.owners (owner_id),
    title text NOT NULL,
    company_id integer REFERENCES recruiting.companies (company_id),
    sector text,
    location text,
    description text,
    status text NOT NULL,
    created_at timestamptz NOT NULL,
    closed_at timestamptz
);
COMMENT ON COLUMN recruiting.assignments.sector IS 'Filled on about one row in five: search the text.';
COMMENT ON COLUMN recruiting.assignments.status IS 'open, closed-successfully or closed-unsuccessfully';
CREATE TABLE recruiting.candidates (
    candidate_id integer PRIMARY KEY,
    owner_id integer NOT NULL REFERENCES recruiting.owners (owner_id),
    name text NOT NULL,
    headline text,
    experience text
);
"""


def build(
    url: str, sizes: RecruitingSizes | None = None, say: Callable[[str], None] | None = None
) -> RecruitingData:
    say = say or (lambda _: None)
    data = generate(sizes)
    with psycopg.connect(url) as conn:
        conn.execute(SCHEMA_SQL)
        for table, rows in data.tables.items():
            say(f"loading {table} ({len(rows):,} rows)")
            schema, name = table.split(".")
            with conn.cursor() as cur, cur.copy(f'COPY "{schema}"."{name}" FROM STDIN') as copy:
                for row in rows:
                    copy.write_row(row)
        conn.commit()
        conn.execute("ANALYZE recruiting.assignments")
    return data


def write_labels(data: RecruitingData, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        for label in data.labels:
            handle.write(json.dumps(label) + "\n")
    return path
