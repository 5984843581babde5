#!/usr/bin/env python3
"""Generate the mod_agentshop demo catalogue (merchants, devices, products).

Standard library only and fully deterministic: every random choice comes from
random.Random(20261120) and no value depends on the current time.  Running the
script rewrites catalogue.jsonl next to it (the catalogue feed of
docs/catalogue.md), but only after every invariant documented in README.md has
been checked.

    python3 sql/demo/generate.py            # (re)write catalogue.jsonl
    python3 sql/demo/generate.py --check    # check only, write nothing
"""

import json
import os
import random
import sys
from datetime import datetime, timedelta, timezone

SEED = 20261120
rng = random.Random(SEED)
HERE = os.path.dirname(os.path.abspath(__file__))
UTC = timezone.utc
CUTOFF = datetime(2026, 11, 20, tzinfo=UTC)
YEAR_START = datetime(2026, 1, 1, tzinfo=UTC)


def ts(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def rand_dt(start, end, step_min=5):
    """Random datetime in [start, end), minute resolution, seconds zero."""
    span = int((end - start).total_seconds() // 60 // step_min)
    return start + timedelta(minutes=step_min * rng.randrange(max(span, 1)))


def d(month, day, hour=0, minute=0):
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


# --------------------------------------------------------------------------
# Merchants
# --------------------------------------------------------------------------
ALL_CATS = ["hand-soap", "air-filters", "vacuum-parts", "coffee-kitchen",
            "printer-ink", "chargers-cables", "batteries"]

# id, name, country, city, on_time, accuracy, categories sold, base delivery,
# product-id style
MERCHANTS_SRC = [
    ("m-bolwerk", "Bolwerk Drogisterij", "NL", "Utrecht", 0.96, 0.992,
     ["hand-soap", "coffee-kitchen", "batteries"], 1, "BW-{n6}"),
    ("m-grachtwinkel", "De Grachtwinkel", "NL", "Amsterdam", 0.91, 0.981,
     ["hand-soap", "air-filters", "vacuum-parts", "coffee-kitchen"], 1, "GW{n7}"),
    ("m-maasbazaar", "Maasbazaar", "NL", "Rotterdam", 0.87, 0.962,
     ALL_CATS, 2, "{n8}"),
    ("m-noorderhuis", "Noorderhuis Huishoudwaren", "NL", "Groningen", 0.93, 0.987,
     ["vacuum-parts", "air-filters", "coffee-kitchen", "hand-soap"], 2, "NH-{n5}"),
    ("m-kempenklik", "Kempenklik", "NL", "Eindhoven", 0.89, 0.958,
     ["printer-ink", "chargers-cables", "batteries", "air-filters"], 1, "KK{n6}"),
    ("m-scheldeshop", "Scheldeshop", "BE", "Antwerpen", 0.84, 0.949,
     ALL_CATS, 2, "SCH-{n6}"),
    ("m-gentse-voorraadkast", "De Gentse Voorraadkast", "BE", "Gent", 0.95, 0.995,
     ["hand-soap", "coffee-kitchen", "batteries", "vacuum-parts"], 2, "GV{n5}"),
    ("m-dijlestroom", "Dijlestroom Elektro", "BE", "Leuven", 0.82, 0.937,
     ["printer-ink", "chargers-cables", "batteries", "vacuum-parts"], 3, "DS-{n6}"),
    ("m-rheinkontor", "Rheinkontor Haushalt", "DE", "Köln", 0.92, 0.976,
     ["vacuum-parts", "air-filters", "coffee-kitchen", "hand-soap"], 2, "RK{n7}"),
    ("m-elbkiste", "Elbkiste", "DE", "Hamburg", 0.88, 0.968,
     ALL_CATS, 3, "ELB-{n6}"),
    ("m-pleissewerk", "Pleißewerk Technik", "DE", "Leipzig", 0.81, 0.944,
     ["printer-ink", "chargers-cables", "batteries", "air-filters", "vacuum-parts"], 3, "PW{n6}"),
    ("m-prinzipal-buero", "Prinzipal Bürobedarf", "DE", "Münster", 0.97, 0.998,
     ["printer-ink", "chargers-cables", "hand-soap", "batteries"], 2, "PB-{n7}"),
]

HOSTS = {
    "m-bolwerk": "www.bolwerk-drogisterij.example",
    "m-grachtwinkel": "www.grachtwinkel.example",
    "m-maasbazaar": "shop.maasbazaar.example",
    "m-noorderhuis": "www.noorderhuis-huishoudwaren.example",
    "m-kempenklik": "www.kempenklik.example",
    "m-scheldeshop": "www.scheldeshop.example",
    "m-gentse-voorraadkast": "www.gentsevoorraadkast.example",
    "m-dijlestroom": "www.dijlestroom-elektro.example",
    "m-rheinkontor": "www.rheinkontor-haushalt.example",
    "m-elbkiste": "www.elbkiste.example",
    "m-pleissewerk": "www.pleissewerk-technik.example",
    "m-prinzipal-buero": "www.prinzipal-buerobedarf.example",
}


def merchant_pid(style):
    out = style
    for n in (8, 7, 6, 5):
        key = "{n%d}" % n
        if key in out:
            out = out.replace(key, str(rng.randrange(10 ** (n - 1), 10 ** n)))
    return out


# --------------------------------------------------------------------------
# Devices.  slots: part type -> (dimensions, what the device takes)
#           no_slot: part type -> reason the device cannot take that part
# --------------------------------------------------------------------------
def dev(slug, name, brand, kind, aliases, slots=None, no_slot=None):
    return dict(slug=slug, name=name, brand=brand, kind=kind, aliases=aliases,
                slots=slots or {}, no_slot=no_slot or {})


DEVICES_SRC = [
    # vacuum cleaners
    dev("dyson-v8-animal", "Dyson V8 Animal", "Dyson", "vacuum-cleaner", ["SV10", "V8"], {
        "filter": ({"filter_diameter": 66.2}, "the 967478-01 post-motor filter"),
        "battery": ({"battery_voltage": 21.6, "latch_width": 38.0}, "21.6 V V8 batteries"),
        "accessory-kit": ({"connector_diameter": 32.2}, "Dyson quick-release tools")}),
    dev("dyson-v11-absolute", "Dyson V11 Absolute", "Dyson", "vacuum-cleaner", ["SV14", "V11"], {
        "filter": ({"filter_diameter": 87.2}, "the 970013-02 post-motor filter"),
        "battery": ({"battery_voltage": 25.2, "latch_width": 44.5}, "25.2 V click-in batteries"),
        "accessory-kit": ({"connector_diameter": 32.2}, "Dyson quick-release tools")}),
    dev("dyson-v15-detect", "Dyson V15 Detect", "Dyson", "vacuum-cleaner", ["SV22", "V15"], {
        "filter": ({"filter_diameter": 87.1}, "the 970013-02 post-motor filter"),
        "battery": ({"battery_voltage": 25.2, "latch_width": 44.6}, "25.2 V click-in batteries"),
        "accessory-kit": ({"connector_diameter": 32.3}, "Dyson quick-release tools")}),
    dev("miele-complete-c3", "Miele Complete C3 Cat & Dog", "Miele", "vacuum-cleaner", ["SGEF3", "C3"], {
        "filter": ({"filter_width": 150.0, "filter_length": 104.0}, "SF-HA 50 exhaust filters"),
        "dust-bag": ({"collar_width": 120.0, "inlet_diameter": 50.0}, "type GN dust bags"),
        "accessory-kit": ({"connector_diameter": 35.0}, "35 mm Miele tools")},
        {"battery": "is a corded vacuum cleaner without a battery"}),
    dev("miele-classic-c1", "Miele Classic C1 Flex", "Miele", "vacuum-cleaner", ["SBAF5", "C1"], {
        "filter": ({"filter_width": 150.2, "filter_length": 104.1}, "SF-HA 50 exhaust filters"),
        "dust-bag": ({"collar_width": 100.0, "inlet_diameter": 45.0}, "type FJM dust bags"),
        "accessory-kit": ({"connector_diameter": 35.1}, "35 mm Miele tools")},
        {"battery": "is a corded vacuum cleaner without a battery"}),
    dev("bosch-serie-4-bgls4pow2", "Bosch Serie 4 ProPower BGLS4POW2", "Bosch", "vacuum-cleaner",
        ["BGLS4POW2"], {
            "filter": ({"filter_width": 170.0, "filter_length": 120.0}, "BBZ156HF HEPA filters"),
            "dust-bag": ({"collar_width": 150.0, "inlet_diameter": 55.0}, "type G ALL dust bags"),
            "accessory-kit": ({"connector_diameter": 36.5}, "36.5 mm Bosch tools")},
        {"battery": "is a corded vacuum cleaner without a battery"}),
    # air purifiers
    dev("philips-ac2887", "Philips Series 2000i Air Purifier AC2887", "Philips", "air-purifier",
        ["AC2887/10", "2000i"], {
            "filter": ({"frame_width": 228.0, "frame_height": 368.0}, "FY2422/30 and FY2420/30 filters")}),
    dev("philips-ac1215", "Philips Series 1000i Air Purifier AC1215", "Philips", "air-purifier",
        ["AC1215/10"], {
            "filter": ({"frame_width": 180.0, "frame_height": 305.0}, "FY1410/30 and FY1413/30 filters")}),
    dev("philips-ac0820", "Philips Series 800 Air Purifier AC0820", "Philips", "air-purifier",
        ["AC0820/10"], {
            "filter": ({"outer_diameter": 185.0, "filter_height": 200.0}, "FY0194/30 round filters")}),
    dev("levoit-core-300", "Levoit Core 300", "Levoit", "air-purifier", ["Core 300"], {
        "filter": ({"outer_diameter": 165.0, "filter_height": 190.0}, "Core 300-RF filters")}),
    dev("xiaomi-mi-air-purifier-3h", "Xiaomi Mi Air Purifier 3H", "Xiaomi", "air-purifier",
        ["AC-M6-SC", "3H"], {
            "filter": ({"outer_diameter": 200.0, "filter_height": 280.0}, "M8R-FLH cylindrical filters")}),
    dev("blueair-blue-pure-211", "Blueair Blue Pure 211+", "Blueair", "air-purifier", ["211+"], {
        "filter": ({"outer_diameter": 265.0, "filter_height": 300.0}, "Blue Pure 211 wrap filters")}),
    # coffee machines
    dev("philips-ep2220", "Philips Series 2200 EP2220", "Philips", "coffee-machine", ["EP2220/10"], {
        "descaler": ({}, "Philips CA6700 descaler"),
        "filter": ({"neck_diameter": 27.0}, "AquaClean CA6903 filters")}),
    dev("philips-ep3246", "Philips Series 3200 LatteGo EP3246", "Philips", "coffee-machine",
        ["EP3246/70"], {
            "descaler": ({}, "Philips CA6700 descaler"),
            "filter": ({"neck_diameter": 27.1}, "AquaClean CA6903 filters")}),
    dev("delonghi-magnifica-s-ecam22-110", "De'Longhi Magnifica S ECAM 22.110.B", "De'Longhi",
        "coffee-machine", ["ECAM22.110.B", "Magnifica S"], {
            "descaler": ({}, "EcoDecalk descaler"),
            "filter": ({"neck_diameter": 24.0}, "DLSC002 water filters")}),
    dev("jura-e8", "Jura E8", "Jura", "coffee-machine", ["E8"], {
        "descaler": ({}, "Jura descaling tablets"),
        "filter": ({"neck_diameter": 30.5}, "Claris Smart+ filter cartridges")}),
    dev("siemens-eq6-plus-s300", "Siemens EQ.6 plus s300", "Siemens", "coffee-machine",
        ["TE653501DE"], {
            "descaler": ({}, "TZ80002A descaling tablets"),
            "filter": ({"neck_diameter": 28.5}, "Brita Intenza TZ70003 filters")}),
    # water jugs
    dev("brita-marella", "Brita Marella", "Brita", "water-jug", [], {
        "jug-filter": ({"cartridge_diameter": 62.2}, "Maxtra-type cartridges")}),
    dev("brita-style-xl", "Brita Style XL", "Brita", "water-jug", ["Style"], {
        "jug-filter": ({"cartridge_diameter": 62.1}, "Maxtra-type cartridges")}),
    dev("brita-aluna", "Brita Aluna", "Brita", "water-jug", [], {
        "jug-filter": ({"cartridge_diameter": 62.0}, "Maxtra-type cartridges")}),
    dev("bwt-vida", "BWT Vida", "BWT", "water-jug", ["Vida 2.6 l"], {
        "jug-filter": ({"cartridge_diameter": 62.3}, "BWT and Maxtra-type cartridges")}),
    # printers
    dev("hp-laserjet-pro-m404dn", "HP LaserJet Pro M404dn", "HP", "printer", ["W1A53A", "M404dn"], {
        "toner": ({"cartridge_width": 98.0}, "HP 59A/59X toner")}),
    dev("hp-laserjet-pro-mfp-m428fdw", "HP LaserJet Pro MFP M428fdw", "HP", "printer",
        ["W1A30A", "M428fdw"], {
            "toner": ({"cartridge_width": 98.2}, "HP 59A/59X toner")}),
    dev("hp-officejet-pro-9010", "HP OfficeJet Pro 9010", "HP", "printer", ["3UK83B"], {
        "ink-cartridge": ({"cartridge_width": 33.0}, "HP 963 ink cartridges")}),
    dev("hp-officejet-pro-8022e", "HP OfficeJet Pro 8022e", "HP", "printer", ["229W7B"], {
        "ink-cartridge": ({"cartridge_width": 29.5}, "HP 912 ink cartridges")}),
    dev("brother-hl-l2350dw", "Brother HL-L2350DW", "Brother", "printer", ["HLL2350DW"], {
        "toner": ({"cartridge_width": 56.2}, "TN-2410/TN-2420 toner")}),
    dev("brother-mfc-l3750cdw", "Brother MFC-L3750CDW", "Brother", "printer", ["MFCL3750CDW"], {
        "toner": ({"cartridge_width": 42.0}, "TN-243/TN-247 toner")}),
    dev("canon-pixma-ts5150", "Canon PIXMA TS5150", "Canon", "printer", ["2228C006"], {
        "ink-cartridge": ({"cartridge_width": 27.0}, "PG-545/CL-546 cartridges")}),
    dev("epson-workforce-wf-2930", "Epson WorkForce WF-2930DWF", "Epson", "printer",
        ["WF-2930", "C11CH57402"], {
            "ink-cartridge": ({"cartridge_width": 12.5}, "Epson 604 'Pineapple' cartridges")}),
    # phones
    dev("apple-iphone-15", "Apple iPhone 15", "Apple", "phone", ["A3090", "iPhone 15"], {
        "charger": ({"pd_voltage": 9.0}, "a USB-PD charger"),
        "cable": ({"plug_width": 8.25}, "a USB-C cable")},
        {"battery": "has a battery that is not user-replaceable"}),
    dev("apple-iphone-13", "Apple iPhone 13", "Apple", "phone", ["A2633", "iPhone 13"], {
        "charger": ({"pd_voltage": 9.0}, "a USB-PD charger"),
        "cable": ({"plug_width": 7.70}, "a Lightning cable")},
        {"battery": "has a battery that is not user-replaceable"}),
    dev("samsung-galaxy-s24", "Samsung Galaxy S24", "Samsung", "phone", ["SM-S921B", "S24"], {
        "charger": ({"pd_voltage": 9.0}, "a USB-PD/PPS charger"),
        "cable": ({"plug_width": 8.25}, "a USB-C cable")},
        {"battery": "has a glued-in battery that is not user-replaceable"}),
    dev("google-pixel-8", "Google Pixel 8", "Google", "phone", ["GKWS6"], {
        "charger": ({"pd_voltage": 9.0}, "a USB-PD charger"),
        "cable": ({"plug_width": 8.25}, "a USB-C cable")},
        {"battery": "has a battery that is not user-replaceable"}),
    dev("fairphone-5", "Fairphone 5", "Fairphone", "phone", ["FP5"], {
        "charger": ({"pd_voltage": 9.0}, "a USB-PD charger"),
        "cable": ({"plug_width": 8.25}, "a USB-C cable"),
        "battery": ({"battery_length": 74.0, "battery_width": 58.5}, "the F5BATT battery")}),
    # laptops
    dev("apple-macbook-air-13-m2", "Apple MacBook Air 13-inch (M2, 2022)", "Apple", "laptop",
        ["A2681", "MacBook Air M2"], {
            "charger": ({"pd_voltage": 20.0}, "a 20 V USB-PD charger of at least 30 W"),
            "cable": ({"plug_width": 8.25}, "a USB-C cable")}),
    dev("dell-xps-13-9340", "Dell XPS 13 9340", "Dell", "laptop", ["XPS 9340"], {
        "charger": ({"pd_voltage": 20.0}, "a 20 V USB-PD charger of at least 45 W"),
        "cable": ({"plug_width": 8.25}, "a USB-C cable")}),
    dev("lenovo-thinkpad-x1-carbon-gen-11", "Lenovo ThinkPad X1 Carbon Gen 11", "Lenovo", "laptop",
        ["21HM", "X1 Carbon G11"], {
            "charger": ({"pd_voltage": 20.0}, "a 20 V USB-PD charger of at least 45 W"),
            "cable": ({"plug_width": 8.25}, "a USB-C cable")}),
    dev("framework-laptop-13", "Framework Laptop 13", "Framework", "laptop", [], {
        "charger": ({"pd_voltage": 20.0}, "a 20 V USB-PD charger of at least 45 W"),
        "cable": ({"plug_width": 8.25}, "a USB-C cable")}),
    # cordless tools
    dev("makita-dhp482", "Makita DHP482 Combi Drill", "Makita", "cordless-tool", ["DHP482Z", "DHP482RFJ"], {
        "battery": ({"battery_voltage": 18.0, "rail_width": 49.8}, "Makita LXT 18 V slide batteries")}),
    dev("makita-ddf485", "Makita DDF485 Drill Driver", "Makita", "cordless-tool", ["DDF485Z"], {
        "battery": ({"battery_voltage": 18.0, "rail_width": 49.9}, "Makita LXT 18 V slide batteries")}),
    dev("bosch-gsr-18v-55", "Bosch Professional GSR 18V-55", "Bosch", "cordless-tool", ["06019H5202"], {
        "battery": ({"battery_voltage": 18.0, "rail_width": 55.4}, "Bosch Professional 18 V batteries")}),
    dev("dewalt-dcd796", "DeWalt DCD796 Combi Drill", "DeWalt", "cordless-tool", ["DCD796N"], {
        "battery": ({"battery_voltage": 18.0, "rail_width": 57.2}, "DeWalt XR 18 V batteries")}),
    dev("einhell-te-cd-18-40-li", "Einhell TE-CD 18/40 Li", "Einhell", "cordless-tool", ["TE-CD 18/40"], {
        "battery": ({"battery_voltage": 18.0, "rail_width": 61.0}, "Power X-Change 18 V batteries")}),
]
DEV = {x["slug"]: x for x in DEVICES_SRC}


def short(slug):
    dv = DEV[slug]
    rest = dv["name"][len(dv["brand"]) + 1:] if dv["name"].startswith(dv["brand"] + " ") else dv["name"]
    return rest if len(rest) > 3 else dv["name"]  # "Fairphone 5", not "5"


# Compatibility dimensions: label, unit, tolerance, spec row it mirrors (or None)
DIMS = {
    "filter_diameter": ("Filter diameter", "mm", 0.5, "diameter_mm"),
    "filter_width": ("Filter width", "mm", 1.0, "width_mm"),
    "filter_length": ("Filter length", "mm", 1.0, "length_mm"),
    "frame_width": ("Frame width", "mm", 1.5, "width_mm"),
    "frame_height": ("Frame height", "mm", 1.5, "height_mm"),
    "outer_diameter": ("Outer diameter", "mm", 1.5, "diameter_mm"),
    "filter_height": ("Filter height", "mm", 1.5, "height_mm"),
    "collar_width": ("Collar plate width", "mm", 1.0, "collar_width_mm"),
    "inlet_diameter": ("Inlet diameter", "mm", 1.0, "inlet_diameter_mm"),
    "connector_diameter": ("Tool connector diameter", "mm", 0.4, "connector_diameter_mm"),
    "neck_diameter": ("Filter neck diameter", "mm", 0.4, "neck_diameter_mm"),
    "cartridge_diameter": ("Cartridge base diameter", "mm", 0.8, "cartridge_diameter_mm"),
    "cartridge_width": ("Cartridge width", "mm", 1.0, None),
    "battery_voltage": ("Nominal voltage", "V", 0.3, None),
    "latch_width": ("Latch width", "mm", 0.3, None),
    "rail_width": ("Slide rail width", "mm", 0.3, None),
    "battery_length": ("Battery length", "mm", 0.5, None),
    "battery_width": ("Battery width", "mm", 0.5, None),
    "pd_voltage": ("USB-PD voltage negotiated", "V", 0.5, None),
    "plug_width": ("Plug width at device end", "mm", 0.15, None),
}
NEGOTIATED = {"pd_voltage"}  # part value = min(part capability, device request)

# --------------------------------------------------------------------------
# Spec row helpers
# --------------------------------------------------------------------------


def perf(spec, label, unit, claimed, tol=2):
    return dict(spec=spec, label=label, kind="performance", unit=unit, claimed=claimed, tol=tol)


def cat(spec, label, claimed, unit=None):
    return dict(spec=spec, label=label, kind="categorical", unit=unit, claimed=claimed)


def info(spec, label, claimed, unit=None):
    return dict(spec=spec, label=label, kind="info", unit=unit, claimed=claimed)


PRODUCTS_SRC = []


def P(cat_, pt, name, brand, price, specs, dims=None, listed=(), true_dims=None,
      blockers=None, state=None, contra=None, gtin_cc=None, compat=True, desc=None,
      declared_by=None, no_auto=False):
    PRODUCTS_SRC.append(dict(
        category=cat_, part_type=pt, name=name, brand=brand, price=price, specs=specs,
        dims=dims or {}, listed=list(listed), true_dims=true_dims or {},
        blockers=blockers or {}, state=state, contra=contra, gtin_cc=gtin_cc,
        compat=compat, desc=desc, declared_by=declared_by or brand, no_auto=no_auto))


# --------------------------------------------------------------------------
# hand-soap
# --------------------------------------------------------------------------
# name, brand, price, total ml, pack, bottle ml, truth overrides
SOAPS = [
    ("Dove Deeply Nourishing Hand Wash 250 ml", "Dove", 249, 250, 1, 250,
     dict(fragrance="original", panthenol=False)),
    ("Dove Care & Protect Antibacterial Hand Wash 250 ml", "Dove", 259, 250, 1, 250,
     dict(fragrance="fresh", vegan=False)),
    ("Dove Deeply Nourishing Hand Wash Refill 500 ml", "Dove", 399, 500, 1, 500,
     dict(packaging="refill pouch", fragrance="original")),
    ("Dove Foaming Hand Wash Sensitive 250 ml", "Dove", 349, 250, 1, 250,
     dict(format="foam", fragrance="unscented")),
    ("Palmolive Naturals Almond & Milk Hand Wash 300 ml", "Palmolive", 199, 300, 1, 300,
     dict(fragrance="almond & milk")),
    ("Palmolive Hygiene-Plus Hand Wash Refill 500 ml", "Palmolive", 299, 500, 1, 500,
     dict(packaging="refill pouch", fragrance="fresh")),
    ("Palmolive Naturals Aloe Vera Hand Wash 3 × 300 ml", "Palmolive", 549, 900, 3, 300,
     dict(aloe_vera=True, fragrance="aloe vera")),
    ("Palmolive Hygiene-Plus Sensitive Hand Wash 300 ml", "Palmolive", 219, 300, 1, 300,
     dict(fragrance="unscented")),
    ("Dettol Original Antibacterial Hand Wash 250 ml", "Dettol", 299, 250, 1, 250,
     dict(fragrance="original")),
    ("Dettol Original Hand Wash Refill 500 ml", "Dettol", 449, 500, 1, 500,
     dict(packaging="refill pouch", fragrance="original")),
    ("Dettol Soft on Skin Hand Wash 2 × 250 ml", "Dettol", 499, 500, 2, 250,
     dict(fragrance="aloe vera", aloe_vera=True)),
    ("Ecover Hand Soap Lavender & Aloe Vera 250 ml", "Ecover", 349, 250, 1, 250,
     dict(vegan=True, aloe_vera=True, fragrance="lavender", packaging="pump bottle (recycled plastic)")),
    ("Ecover Hand Soap Refill Lavender & Aloe Vera 1 l", "Ecover", 749, 1000, 1, 1000,
     dict(vegan=True, aloe_vera=True, fragrance="lavender", packaging="refill bottle")),
    ("Ecover Hand Soap Rosemary & Bergamot 250 ml", "Ecover", 349, 250, 1, 250,
     dict(vegan=True, fragrance="rosemary & bergamot", packaging="pump bottle (recycled plastic)")),
    ("Method Gel Hand Wash Sea Minerals 354 ml", "Method", 449, 354, 1, 354,
     dict(vegan=True, format="gel", fragrance="sea minerals")),
    ("Method Gel Hand Wash Refill Sea Minerals 1 l", "Method", 899, 1000, 1, 1000,
     dict(vegan=True, format="gel", fragrance="sea minerals", packaging="refill bottle")),
    ("Method Foaming Hand Wash Sweet Water 300 ml", "Method", 499, 300, 1, 300,
     dict(vegan=True, format="foam", fragrance="sweet water")),
    ("Rituals The Ritual of Sakura Hand Wash 300 ml", "Rituals", 950, 300, 1, 300,
     dict(vegan=True, fragrance="rice milk & cherry blossom")),
    ("Rituals The Ritual of Karma Hand Wash 300 ml", "Rituals", 950, 300, 1, 300,
     dict(vegan=True, fragrance="holy lotus & white tea")),
    ("Nivea Creme Soft Cream Soap 250 ml", "Nivea", 219, 250, 1, 250,
     dict(format="cream", panthenol=True, fragrance="creme soft")),
    ("Nivea Creme Care Hand Wash Set (250 ml + 500 ml refill)", "Nivea", 549, 750, 2, 250,
     dict(format="cream", panthenol=True, fragrance="creme care",
          pack_contents=["pump bottle 250 ml", "refill pouch 500 ml"])),
    ("Neutral 0% Hand Soap Fragrance-Free 250 ml", "Neutral", 289, 250, 1, 250,
     dict(fragrance="unscented", vegan=True)),
    ("Sodasan Sensitive Liquid Soap 300 ml", "Sodasan", 399, 300, 1, 300,
     dict(vegan=True, fragrance="unscented", use=["hands", "body"])),
    ("Sodasan Lemon Liquid Soap Refill 1 l", "Sodasan", 699, 1000, 1, 1000,
     dict(vegan=True, fragrance="lemon", packaging="refill bottle", use=["hands", "body"])),
    ("Dr. Bronner's Pure-Castile Liquid Soap Lavender 240 ml", "Dr. Bronner's", 899, 240, 1, 240,
     dict(vegan=True, fragrance="lavender", use=["hands", "body", "face"], glycerin=False)),
    ("Fa Hygiene & Fresh Hand Soap 250 ml", "Fa", 179, 250, 1, 250,
     dict(fragrance="fresh")),
    ("Carex Original Antibacterial Hand Wash 250 ml", "Carex", 189, 250, 1, 250,
     dict(fragrance="original")),
]
SOAP_CC = {"Dove": "87", "Palmolive": "87", "Dettol": "50", "Ecover": "54", "Method": "0",
           "Rituals": "87", "Nivea": "40", "Neutral": "87", "Sodasan": "40",
           "Dr. Bronner's": "0", "Fa": "40", "Carex": "50"}

for (nm, br, price, vol, pack, bottle, ov) in SOAPS:
    truth = dict(use=["hands"], vegan=False, format="liquid", glycerin=True, aloe_vera=False,
                 fragrance="original", packaging="pump bottle", panthenol=False,
                 paraben_free=br in ("Ecover", "Method", "Sodasan", "Neutral", "Dr. Bronner's", "Rituals"),
                 silicone_free=True)
    truth.update(ov)
    if pack > 1 and "pack_contents" not in truth:
        truth["pack_contents"] = ["%d × %d ml bottles" % (pack, bottle)]
    spec_of = {
        "use": lambda: cat("use", "Use", truth["use"]),
        "vegan": lambda: cat("vegan", "Vegan", truth["vegan"]),
        "format": lambda: cat("format", "Format", truth["format"]),
        "glycerin": lambda: cat("glycerin", "Contains glycerin", truth["glycerin"]),
        "aloe_vera": lambda: cat("aloe_vera", "Contains aloe vera", truth["aloe_vera"]),
        "fragrance": lambda: cat("fragrance", "Fragrance", truth["fragrance"]),
        "packaging": lambda: cat("packaging", "Packaging", truth["packaging"]),
        "panthenol": lambda: cat("panthenol", "Contains panthenol", truth["panthenol"]),
        "paraben_free": lambda: cat("paraben_free", "Paraben-free", truth["paraben_free"]),
        "silicone_free": lambda: cat("silicone_free", "Silicone-free", truth["silicone_free"]),
        "volume_ml": lambda: perf("volume_ml", "Volume", "ml", vol),
        "pack_count": lambda: cat("pack_count", "Pack count", pack),
        "bottle_volume_ml": lambda: perf("bottle_volume_ml", "Bottle volume", "ml", bottle),
        "listed_volume_ml": lambda: info("listed_volume_ml", "Listed volume", vol, "ml"),
        "pack_contents": lambda: cat("pack_contents", "Pack contents", truth["pack_contents"]),
    }
    chosen = ["volume_ml", "format", "vegan"]
    if pack > 1 and "pack_contents" in ov:  # mixed set: bottle volume is not uniform
        chosen += ["pack_count", "pack_contents"]
    elif pack > 1:
        chosen += ["pack_count", "bottle_volume_ml", "pack_contents"]
    pool = ["use", "fragrance", "packaging", "glycerin", "aloe_vera", "panthenol",
            "paraben_free", "silicone_free", "listed_volume_ml"]
    rng.shuffle(pool)
    pool.sort(key=lambda k: truth.get(k) is False)  # shops rarely advertise a missing feature
    target = rng.randint(6, 8)
    chosen += pool[:max(0, target - len(chosen))]
    order = list(spec_of)
    chosen.sort(key=order.index)
    specs = [spec_of[k]() for k in chosen]
    kind = {"liquid": "Liquid hand soap", "foam": "Foaming hand wash", "gel": "Gel hand wash",
            "cream": "Cream hand soap"}[truth["format"]]
    if pack == 1:
        desc = "%s from %s in a %d ml %s." % (kind, br, vol, truth["packaging"])
    else:
        desc = "%s from %s, %d ml in total: %s." % (kind, br, vol, ", ".join(truth["pack_contents"]))
    desc += " Fragrance-free." if truth["fragrance"] == "unscented" else " Scent: %s." % truth["fragrance"]
    P("hand-soap", "hand-soap", nm, br, price, specs, gtin_cc=SOAP_CC[br], compat=False, desc=desc)

# --------------------------------------------------------------------------
# air-filters (part type filter, devices: air-purifier)
# --------------------------------------------------------------------------


def airf(name, brand, price, ftype, eff, months, carbon, dims, listed, pack=1, true_dims=None,
         state=None, contra=None, cc="87"):
    specs = [cat("filter_type", "Filter type", ftype)]
    if eff is not None:
        specs.append(perf("filter_efficiency_pct", "Filtration efficiency (0.3 µm)", "%", eff, tol=0.5))
    specs.append(cat("activated_carbon", "Activated carbon layer", carbon))
    specs.append(info("lifetime_months", "Rated lifetime", months, "months"))
    if pack > 1:
        specs.append(cat("pack_count", "Pack count", pack))
    desc = "%s replacement filter (%s) for the %s. Rated for about %d months of use." % (
        "Original" if brand == DEV[listed[0]]["brand"] else "Compatible", ftype,
        " and ".join(short(s) for s in listed), months)
    P("air-filters", "filter", name, brand, price, specs, dims=dims, listed=listed,
      true_dims=true_dims, state=state, contra=contra, gtin_cc=cc, desc=desc)


R2887 = {"frame_width": 228.0, "frame_height": 368.0}
R1215 = {"frame_width": 180.0, "frame_height": 305.0}
C0820 = {"outer_diameter": 185.0, "filter_height": 200.0}
CCORE = {"outer_diameter": 165.0, "filter_height": 190.0}
CXIA = {"outer_diameter": 200.0, "filter_height": 280.0}
CBLU = {"outer_diameter": 265.0, "filter_height": 300.0}
airf("Philips NanoProtect HEPA Filter FY2422/30", "Philips", 5999, "HEPA H13", 99.97, 36, False, R2887, ["philips-ac2887"])
airf("Philips NanoProtect Active Carbon Filter FY2420/30", "Philips", 3999, "activated carbon", None, 24, True, R2887, ["philips-ac2887"])
airf("vhbw HEPA Filter for Philips FY2422/30", "vhbw", 2799, "HEPA H13", 99.95, 12, False, R2887, ["philips-ac2887"], cc="40")
airf("Nispira 2-in-1 Filter Set for Philips AC2887 (HEPA + Carbon)", "Nispira", 3499, "HEPA H13 + activated carbon", 99.97, 12, True, R2887, ["philips-ac2887"], pack=2, cc="0")
airf("Philips NanoProtect HEPA Filter FY1410/30", "Philips", 3999, "HEPA H13", 99.97, 24, False, R1215, ["philips-ac1215"])
airf("Philips Active Carbon Filter FY1413/30", "Philips", 2999, "activated carbon", None, 24, True, R1215, ["philips-ac1215"])
airf("Nispira HEPA Filter for Philips FY1410/30", "Nispira", 1999, "HEPA H13", 99.97, 12, False, R1215, ["philips-ac1215"], cc="0")
airf("Poweka Replacement Filter for Philips AC1215 (2-pack)", "Poweka", 2499, "HEPA H12", 99.5, 6, False, R1215, ["philips-ac1215"], pack=2,
     true_dims={"frame_width": 176.5}, state="contradicted", cc="69")
airf("Philips NanoProtect Filter FY0194/30", "Philips", 3499, "HEPA + activated carbon", 99.97, 12, True, C0820, ["philips-ac0820"])
airf("vhbw Filter for Philips FY0194/30", "vhbw", 1899, "HEPA H13 + activated carbon", 99.95, 12, True, C0820, ["philips-ac0820"], cc="40")
airf("Nispira 3-in-1 Filter for Philips Series 800", "Nispira", 2199, "pre-filter + HEPA H13 + carbon", 99.97, 12, True, C0820, ["philips-ac0820"], cc="0")
airf("Levoit Core 300-RF Original Filter", "Levoit", 2999, "pre-filter + HEPA + carbon", 99.97, 6, True, CCORE, ["levoit-core-300"], cc="0")
airf("Levoit Core 300-RF-TX Toxin Absorber Filter", "Levoit", 3999, "HEPA + high-efficiency carbon", 99.97, 6, True, CCORE, ["levoit-core-300"], cc="0")
airf("Levoit Core 300-RF-PA Pet Allergy Filter", "Levoit", 3699, "HEPA + pet-allergy carbon", 99.97, 6, True, CCORE, ["levoit-core-300"], cc="0")
airf("Poweka Replacement Filter for Levoit Core 300 (2-pack)", "Poweka", 2399, "pre-filter + HEPA H13 + carbon", 99.97, 6, True, CCORE, ["levoit-core-300"], pack=2, cc="69")
airf("vhbw 3-in-1 Filter for Levoit Core 300", "vhbw", 1699, "pre-filter + HEPA + carbon", 99.9, 6, True, CCORE, ["levoit-core-300"], cc="40")
airf("Xiaomi Mi Air Purifier HEPA Filter M8R-FLH", "Xiaomi", 3499, "HEPA H13 + carbon", 99.97, 12, True, CXIA, ["xiaomi-mi-air-purifier-3h"], cc="69")
airf("Xiaomi Mi Air Purifier Anti-formaldehyde Filter", "Xiaomi", 4999, "HEPA + formaldehyde-absorbing carbon", 99.97, 12, True, CXIA, ["xiaomi-mi-air-purifier-3h"], cc="69")
airf("Wessper HEPA Filter for Xiaomi Mi 3H (2-pack)", "Wessper", 2999, "HEPA H13 + carbon", 99.97, 6, True, CXIA, ["xiaomi-mi-air-purifier-3h"], pack=2,
     true_dims={"outer_diameter": 196.5}, state="contradicted", cc="59")
airf("Nispira Filter for Xiaomi Mi Air Purifier 3H", "Nispira", 1899, "HEPA H13 + carbon", 99.97, 6, True, CXIA, ["xiaomi-mi-air-purifier-3h"], cc="0")
airf("Blueair Blue Pure 211 Particle + Carbon Filter", "Blueair", 6999, "particle + activated carbon", 99.97, 6, True, CBLU, ["blueair-blue-pure-211"], cc="73")
airf("Blueair Blue Pure 211 Particle Filter", "Blueair", 5499, "particle", 99.97, 6, False, CBLU, ["blueair-blue-pure-211"], cc="73")
airf("Nispira Particle + Carbon Filter for Blueair Blue Pure 211+", "Nispira", 3299, "particle + activated carbon", 99.9, 6, True, CBLU, ["blueair-blue-pure-211"], cc="0")
airf("Poweka Filter for Blueair Blue Pure 211+", "Poweka", 2899, "particle + activated carbon", 99.5, 6, True, CBLU, ["blueair-blue-pure-211"], cc="69")

# --------------------------------------------------------------------------
# vacuum-parts
# --------------------------------------------------------------------------
DYSON_ALL = ["dyson-v8-animal", "dyson-v11-absolute", "dyson-v15-detect"]


def vfilter(name, brand, price, ftype, eff, washable, dims, listed, pack=1, true_dims=None, state=None, cc="50"):
    specs = [cat("filter_type", "Filter type", ftype),
             perf("filter_efficiency_pct", "Filtration efficiency (0.3 µm)", "%", eff, tol=0.5),
             cat("washable", "Washable", washable)]
    if pack > 1:
        specs.append(cat("pack_count", "Pack count", pack))
    desc = "%s filter for the %s. %s" % (ftype, " / ".join(short(s) for s in listed),
                                          "Rinse under the tap and dry for 24 hours before refitting." if washable
                                          else "Not washable; replace every 12 months.")
    P("vacuum-parts", "filter", name, brand, price, specs, dims=dims, listed=listed,
      true_dims=true_dims, state=state, gtin_cc=cc, desc=desc)


vfilter("Dyson V11 Post-Motor HEPA Filter 970013-02", "Dyson", 3499, "HEPA post-motor", 99.97, True,
        {"filter_diameter": 87.0}, ["dyson-v11-absolute", "dyson-v15-detect"])
vfilter("Dyson V8 Post-Motor Filter 967478-01", "Dyson", 2999, "HEPA post-motor", 99.97, True,
        {"filter_diameter": 66.0}, ["dyson-v8-animal"])
vfilter("vhbw Filter Set for Dyson V11 / V15 (2-pack)", "vhbw", 1699, "HEPA post-motor", 99.9, True,
        {"filter_diameter": 87.0}, ["dyson-v11-absolute", "dyson-v15-detect"], pack=2, cc="40")
vfilter("Wessper HEPA Filter for Dyson V8 (2-pack)", "Wessper", 1499, "HEPA post-motor", 99.9, True,
        {"filter_diameter": 66.0}, ["dyson-v8-animal"], pack=2, cc="59")
vfilter("Keepow Filter for Dyson V11 (2-pack)", "Keepow", 1299, "HEPA post-motor", 99.9, True,
        {"filter_diameter": 87.0}, ["dyson-v11-absolute", "dyson-v15-detect"], pack=2,
        true_dims={"filter_diameter": 85.8}, state="contradicted", cc="69")
vfilter("Miele SF-HA 50 HEPA AirClean Filter", "Miele", 3999, "HEPA H13", 99.95, False,
        {"filter_width": 150.0, "filter_length": 104.0}, ["miele-complete-c3", "miele-classic-c1"], cc="40")
vfilter("Menalux MF50 HEPA Filter for Miele", "Menalux", 2199, "HEPA H13", 99.95, False,
        {"filter_width": 150.0, "filter_length": 104.0}, ["miele-complete-c3", "miele-classic-c1"], cc="73")
vfilter("Bosch BBZ156HF HEPA Filter", "Bosch", 2999, "HEPA H13", 99.95, True,
        {"filter_width": 170.0, "filter_length": 120.0}, ["bosch-serie-4-bgls4pow2"], cc="40")
vfilter("Wessper HEPA Filter for Bosch BBZ156HF", "Wessper", 1399, "HEPA H12", 99.5, True,
        {"filter_width": 170.0, "filter_length": 120.0}, ["bosch-serie-4-bgls4pow2"], cc="59")


def dustbag(name, brand, price, pack, cap, layers, filters, dims, listed, cc="40", state=None, contra=None):
    specs = [cat("pack_count", "Bags per pack", pack),
             perf("capacity_l", "Bag capacity", "l", cap, tol=3),
             info("layers", "Filter layers", layers),
             cat("includes_filters", "Includes motor/exhaust filters", filters)]
    desc = "Pack of %d dust bags (%.1f l each) for the %s.%s" % (
        pack, cap, " and ".join(short(s) for s in listed),
        " Includes replacement filters." if filters else "")
    P("vacuum-parts", "dust-bag", name, brand, price, specs, dims=dims, listed=listed,
      state=state, contra=contra, gtin_cc=cc, desc=desc)


GN = {"collar_width": 120.0, "inlet_diameter": 50.0}
FJM = {"collar_width": 100.0, "inlet_diameter": 45.0}
GALL = {"collar_width": 150.0, "inlet_diameter": 55.0}
dustbag("Miele GN HyClean 3D Efficiency Dust Bags (4 bags + 2 filters)", "Miele", 1699, 4, 4.5, 9, True, GN, ["miele-complete-c3"])
dustbag("Swirl M 54 MicroPor Plus Dust Bags (4 bags)", "Swirl", 999, 4, 4.5, 4, True, GN, ["miele-complete-c3"])
dustbag("Wessper Dust Bags for Miele GN (10-pack)", "Wessper", 1299, 10, 4.0, 5, False, GN, ["miele-complete-c3"], cc="59")
dustbag("Miele FJM HyClean 3D Efficiency Dust Bags (4 bags + 2 filters)", "Miele", 1599, 4, 3.5, 9, True, FJM, ["miele-classic-c1"])
dustbag("Menalux 3D Duraflow Dust Bags for Miele FJM (5-pack)", "Menalux", 1099, 5, 3.5, 5, True, FJM, ["miele-classic-c1"], cc="73")
dustbag("Bosch PowerProtect Dust Bags Type G ALL BBZ41FGALL (4 bags)", "Bosch", 1499, 4, 4.0, 3, False, GALL, ["bosch-serie-4-bgls4pow2"])
dustbag("Swirl B 50 MicroPor Plus Dust Bags for Bosch type G (4 bags)", "Swirl", 949, 4, 4.0, 4, True, GALL, ["bosch-serie-4-bgls4pow2"])
dustbag("Menalux 1840 Duraflow Dust Bags for Bosch type G (5-pack)", "Menalux", 1049, 5, 4.0, 5, True, GALL, ["bosch-serie-4-bgls4pow2"], cc="73")


def vbatt(name, brand, price, mah, volts, runtime, weight, dims, listed, state=None, contra=None, cc="50"):
    specs = [perf("capacity_mah", "Capacity", "mAh", mah),
             cat("voltage_v", "Voltage", volts, "V"),
             cat("chemistry", "Chemistry", "Li-ion"),
             perf("runtime_min", "Runtime (eco mode)", "min", runtime, tol=5),
             info("weight_g", "Weight", weight, "g")]
    desc = "%s V %d mAh replacement battery for the %s. Runtime up to %d minutes in eco mode." % (
        volts, mah, " / ".join(short(s) for s in listed), runtime)
    P("vacuum-parts", "battery", name, brand, price, specs, dims=dims, listed=listed,
      state=state, contra=contra, gtin_cc=cc, desc=desc)


V8B = {"battery_voltage": 21.6, "latch_width": 38.0}
V11B = {"battery_voltage": 25.2, "latch_width": 44.5}
vbatt("Dyson V8 Replacement Battery 21.6 V", "Dyson", 7999, 2800, 21.6, 40, 290, V8B, ["dyson-v8-animal"])
vbatt("Dyson V11 Click-in Battery", "Dyson", 12999, 3600, 25.2, 60, 370, V11B, ["dyson-v11-absolute", "dyson-v15-detect"])
vbatt("Dyson V15 Click-in Battery", "Dyson", 13999, 3600, 25.2, 60, 375, V11B, ["dyson-v15-detect", "dyson-v11-absolute"])
vbatt("vhbw Battery for Dyson V8 (3000 mAh)", "vhbw", 4499, 3000, 21.6, 42, 300, V8B, ["dyson-v8-animal"], cc="40")
vbatt("Powerextra Battery for Dyson V11 (4000 mAh)", "Powerextra", 6499, 4000, 25.2, 65, 390, V11B,
      ["dyson-v11-absolute"], state="contradicted", contra=("capacity_mah", 3420), cc="69")
vbatt("Waitley Battery for Dyson V8 (4000 mAh)", "Waitley", 4999, 4000, 21.6, 55, 310, V8B, ["dyson-v8-animal"], cc="69")


def kit(name, brand, price, contents, dims, listed, material, cc="50"):
    specs = [cat("pack_contents", "Pack contents", contents),
             cat("piece_count", "Number of pieces", len(contents)),
             info("material", "Material", material)]
    desc = "%d-piece accessory kit for the %s: %s." % (
        len(contents), " / ".join(short(s) for s in listed), ", ".join(contents))
    P("vacuum-parts", "accessory-kit", name, brand, price, specs, dims=dims, listed=listed, gtin_cc=cc, desc=desc)


kit("Dyson Complete Cleaning Kit", "Dyson", 5999,
    ["stubborn dirt brush", "mattress tool", "soft dusting brush", "extension hose", "up-top adapter"],
    {"connector_diameter": 32.2}, DYSON_ALL, "ABS plastic, nylon bristles")
kit("Dyson Mini Motorised Tool Kit", "Dyson", 3999, ["mini motorised tool", "crevice tool"],
    {"connector_diameter": 32.2}, DYSON_ALL, "ABS plastic")
kit("Wessper Accessory Kit for Dyson V7–V15 (9 pieces)", "Wessper", 2499,
    ["crevice tool", "soft dusting brush", "mattress tool", "flexible crevice tool", "extension hose",
     "upholstery brush", "dusting brush", "adapter", "storage bag"],
    {"connector_diameter": 32.2}, DYSON_ALL, "ABS plastic, nylon bristles", cc="59")
kit("Miele Allergy Care Kit SKMR3", "Miele", 4499, ["turbo brush", "mattress tool", "upholstery nozzle"],
    {"connector_diameter": 35.0}, ["miele-complete-c3", "miele-classic-c1"], "polypropylene", cc="40")
kit("Bosch BBZ124 Accessory Set", "Bosch", 2999, ["upholstery nozzle", "crevice nozzle", "dusting brush"],
    {"connector_diameter": 36.5}, ["bosch-serie-4-bgls4pow2"], "polypropylene", cc="40")

# --------------------------------------------------------------------------
# coffee-kitchen
# --------------------------------------------------------------------------
PHILIPS_COFFEE = ["philips-ep2220", "philips-ep3246"]
ALL_COFFEE = ["philips-ep2220", "philips-ep3246", "delonghi-magnifica-s-ecam22-110", "jura-e8",
              "siemens-eq6-plus-s300"]
JURA_BLOCK = ("Jura", "Jura specifies only Jura descaling tablets for the E8; other descalers are not approved")


def descaler(name, brand, price, fmt, amount, doses, acid, listed, biodeg=True, ph=None, cc="87",
             blockers=None, compat=True, state=None):
    specs = [cat("format", "Format", fmt)]
    if fmt == "liquid":
        specs.append(perf("volume_ml", "Volume", "ml", amount))
    else:
        specs.append(cat("tablet_count", "Tablets", amount))
    specs += [cat("doses", "Descaling cycles", doses),
              cat("active_ingredient", "Active ingredient", acid),
              cat("biodegradable", "Biodegradable", biodeg)]
    if ph is not None:
        specs.append(info("ph", "pH", ph))
    if listed:
        who = " / ".join(short(s) for s in listed)
    else:
        who = "all espresso and filter coffee machines"
    desc = "%s descaler based on %s, enough for %d descaling cycles. Suitable for %s." % (
        {"liquid": "Liquid", "tablets": "Tablet", "powder": "Powder"}[fmt], acid, doses, who)
    P("coffee-kitchen", "descaler", name, brand, price, specs, listed=listed, blockers=blockers,
      compat=compat, gtin_cc=cc, desc=desc, state=state)


descaler("Philips CA6700/10 Liquid Descaler 250 ml", "Philips", 1099, "liquid", 250, 2, "lactic acid", PHILIPS_COFFEE, ph=2.1)
descaler("Philips CA6700/22 Liquid Descaler (2 × 250 ml)", "Philips", 1899, "liquid", 500, 4, "lactic acid", PHILIPS_COFFEE, ph=2.1)
descaler("De'Longhi EcoDecalk DLSC500 Descaler 500 ml", "De'Longhi", 1499, "liquid", 500, 5, "lactic acid",
         ["delonghi-magnifica-s-ecam22-110"], cc="80", blockers={"jura-e8": JURA_BLOCK})
descaler("De'Longhi EcoDecalk Mini DLSC200 (2 × 100 ml)", "De'Longhi", 999, "liquid", 200, 2, "lactic acid",
         ["delonghi-magnifica-s-ecam22-110"], cc="80")
descaler("Jura Descaling Tablets (9 pieces)", "Jura", 1999, "tablets", 9, 3, "sulfamic acid", ["jura-e8"], cc="76")
descaler("Siemens TZ80002A Descaling Tablets (3 pieces)", "Siemens", 1299, "tablets", 3, 3, "citric acid",
         ["siemens-eq6-plus-s300"], cc="40")
descaler("Durgol Swiss Espresso Descaler (2 × 125 ml)", "Durgol", 1199, "liquid", 250, 2, "sulfamic acid",
         ["philips-ep2220", "philips-ep3246", "delonghi-magnifica-s-ecam22-110", "siemens-eq6-plus-s300"],
         cc="76", blockers={"jura-e8": JURA_BLOCK}, biodeg=False)
descaler("Urnex Dezcal Activated Scale Remover 4 × 28 g", "Urnex", 1399, "powder", 4, 4, "citric acid", [],
         cc="0", compat=False)
descaler("HG Koffiemachine Ontkalker 500 ml", "HG", 699, "liquid", 500, 5, "citric acid", [], cc="87", compat=False,
         ph=2.4)


def jugf(name, brand, price, pack, life_l, weeks, reduces, mg, listed, dia=62.0, true_dims=None,
         state=None, contra=None, cc="40"):
    specs = [cat("pack_count", "Cartridges per pack", pack),
             perf("lifetime_l", "Filter capacity per cartridge", "l", life_l, tol=5),
             info("lifetime_weeks", "Recommended change interval", weeks, "weeks"),
             cat("reduces", "Reduces", reduces),
             cat("adds_magnesium", "Adds magnesium", mg)]
    desc = "%s of %d water filter cartridge%s, about %d l or %d weeks each. Reduces %s." % (
        "Pack" if pack > 1 else "Single pack", pack, "s" if pack > 1 else "", life_l, weeks, ", ".join(reduces))
    P("coffee-kitchen", "jug-filter", name, brand, price, specs, dims={"cartridge_diameter": dia},
      listed=listed, true_dims=true_dims, state=state, contra=contra, gtin_cc=cc, desc=desc)


BRITA_JUGS = ["brita-marella", "brita-style-xl", "brita-aluna"]
ALL_JUGS = BRITA_JUGS + ["bwt-vida"]
jugf("Brita Maxtra Pro All-in-1 Filter Cartridge (1-pack)", "Brita", 799, 1, 150, 4, ["limescale", "chlorine", "lead", "copper"], False, ALL_JUGS)
jugf("Brita Maxtra Pro All-in-1 (3-pack)", "Brita", 2199, 3, 150, 4, ["limescale", "chlorine", "lead", "copper"], False, ALL_JUGS)
jugf("Brita Maxtra Pro All-in-1 (6-pack)", "Brita", 3999, 6, 150, 4, ["limescale", "chlorine", "lead", "copper"], False, ALL_JUGS)
jugf("Brita Maxtra Pro Limescale Expert (3-pack)", "Brita", 2399, 3, 100, 4, ["limescale", "chlorine"], False, BRITA_JUGS)
jugf("BWT Magnesium Mineralized Filter Cartridges (3-pack)", "BWT", 1999, 3, 150, 4, ["limescale", "chlorine", "lead"], True, ["bwt-vida"] + BRITA_JUGS[:2], cc="90")
jugf("BWT Longlife Mg2+ Filter Cartridges (4-pack)", "BWT", 2599, 4, 150, 4, ["limescale", "chlorine"], True, ["bwt-vida"], cc="90")
jugf("PearlCo Unimax Filter Cartridges (3-pack)", "PearlCo", 1699, 3, 150, 4, ["limescale", "chlorine", "copper"], False, ALL_JUGS)
jugf("Aqua Optima Evolve+ 30 Day Water Filter (6-pack)", "Aqua Optima", 2699, 6, 120, 4, ["limescale", "chlorine"], False, BRITA_JUGS, cc="50")
jugf("Laica Bi-Flux Water Filter Cartridges (3-pack)", "Laica", 1499, 3, 150, 4, ["limescale", "chlorine"], False, [], dia=58.4, cc="80")
jugf("Amazon Basics Replacement Water Filters (6-pack)", "Amazon Basics", 1899, 6, 150, 4, ["limescale", "chlorine"], False, BRITA_JUGS,
     true_dims={"cartridge_diameter": 60.9}, state="contradicted", cc="0")


def coffeef(name, brand, price, pack, life_l, months, reduces, neck, listed, true_dims=None, state=None, cc="87"):
    specs = [cat("pack_count", "Filters per pack", pack),
             perf("lifetime_l", "Filter capacity per cartridge", "l", life_l, tol=5),
             info("lifetime_months", "Change interval", months, "months"),
             cat("reduces", "Reduces", reduces)]
    desc = "Water filter for the %s. Filters up to %d l (about %d months) per cartridge." % (
        " / ".join(short(s) for s in listed), life_l, months)
    P("coffee-kitchen", "filter", name, brand, price, specs, dims={"neck_diameter": neck}, listed=listed,
      true_dims=true_dims, state=state, gtin_cc=cc, desc=desc)


coffeef("Philips AquaClean Water Filter CA6903/10", "Philips", 1499, 1, 95, 3, ["limescale", "chlorine"], 27.0, PHILIPS_COFFEE)
coffeef("Philips AquaClean Water Filter CA6903/22 (2-pack)", "Philips", 2699, 2, 95, 3, ["limescale", "chlorine"], 27.0, PHILIPS_COFFEE)
coffeef("De'Longhi DLSC002 Water Filter", "De'Longhi", 1199, 1, 50, 2, ["limescale", "chlorine"], 24.0,
        ["delonghi-magnifica-s-ecam22-110"], cc="80")
coffeef("Jura Claris Smart+ Filter Cartridge", "Jura", 2499, 1, 50, 2, ["limescale", "chlorine", "lead"], 30.5, ["jura-e8"], cc="76")
coffeef("Siemens Brita Intenza TZ70003 Water Filter", "Siemens", 1699, 1, 50, 2, ["limescale", "chlorine"], 28.5,
        ["siemens-eq6-plus-s300"], cc="40")
coffeef("Scanpart Water Filter for Jura Claris Smart", "Scanpart", 1399, 1, 50, 2, ["limescale", "chlorine"], 30.5, ["jura-e8"], cc="87")
coffeef("Wessper Water Filter for Philips AquaClean (2-pack)", "Wessper", 1299, 2, 80, 3, ["limescale"], 27.0, PHILIPS_COFFEE,
        true_dims={"neck_diameter": 26.3}, state="contradicted", cc="59")

# --------------------------------------------------------------------------
# printer-ink
# --------------------------------------------------------------------------
HP59 = ["hp-laserjet-pro-m404dn", "hp-laserjet-pro-mfp-m428fdw"]
HP_CHIP_BLOCK = ("HP", "HP Dynamic Security firmware rejects cartridges without an HP-compatible chip")


def toner(name, brand, price, model, colour, pages, chip, weight, listed, width, blockers=None,
          state=None, contra=None, cc="0"):
    specs = [cat("cartridge_model", "Cartridge model", model),
             cat("colour", "Colour", colour),
             perf("page_yield", "Page yield (ISO/IEC 19752)", "pages", pages, tol=5),
             cat("chip", "Chip fitted", chip),
             info("toner_weight_g", "Toner weight", weight, "g")]
    col = colour if isinstance(colour, str) else "/".join(colour)
    desc = "%s toner (%s), about %d pages. %s" % (
        model, col, pages, "For the " + " and ".join(short(s) for s in listed) + "." if listed else
        "Sold as compatible with HP 59A printers.")
    P("printer-ink", "toner", name, brand, price, specs, dims={"cartridge_width": width}, listed=listed,
      blockers=blockers, state=state, contra=contra, gtin_cc=cc, desc=desc)


toner("HP 59A Black Original LaserJet Toner Cartridge (CF259A)", "HP", 10999, "CF259A", "black", 3000, True, 610, HP59, 98.0)
toner("HP 59X High Yield Black Original LaserJet Toner Cartridge (CF259X)", "HP", 14499, "CF259X", "black", 10000, True, 980, HP59, 98.0)
toner("Peach Toner Cartridge compatible with HP 59X (with chip)", "Peach", 6499, "CF259X", "black", 10000, True, 950, HP59, 98.0, cc="76")
toner("Jet Tec Toner compatible with HP 59A (no chip)", "Jet Tec", 4299, "CF259A", "black", 3000, False, 600, HP59, 98.0,
      blockers={s: HP_CHIP_BLOCK for s in HP59}, cc="50")
toner("Prestige Cartridge Toner compatible with HP 59A", "Prestige Cartridge", 4999, "CF259A", "black", 3000, True, 620, HP59, 98.0, cc="50")
BRO_MONO = ["brother-hl-l2350dw"]
BRO_COL = ["brother-mfc-l3750cdw"]
toner("Brother TN-2420 High Yield Black Toner", "Brother", 8999, "TN-2420", "black", 3000, True, 380, BRO_MONO, 56.0, cc="49")
toner("Brother TN-2410 Black Toner", "Brother", 5999, "TN-2410", "black", 1200, True, 230, BRO_MONO, 56.0, cc="49")
toner("Peach Toner compatible with Brother TN-2420", "Peach", 4499, "TN-2420", "black", 3000, True, 370, BRO_MONO, 56.0, cc="76")
toner("Jet Tec Toner compatible with Brother TN-2420", "Jet Tec", 4399, "TN-2420", "black", 3000, True, 360, BRO_MONO, 56.0,
      state="contradicted", contra=("page_yield", 2410), cc="50")
toner("Brother TN-243CMYK Toner Value Pack", "Brother", 13999, "TN-243CMYK", ["black", "cyan", "magenta", "yellow"], 1000, True, 520, BRO_COL, 42.0, cc="49")
toner("Brother TN-247BK High Yield Black Toner", "Brother", 8999, "TN-247BK", "black", 3000, True, 240, BRO_COL, 42.0, cc="49")
toner("Brother TN-247C High Yield Cyan Toner", "Brother", 10999, "TN-247C", "cyan", 2300, True, 210, BRO_COL, 42.0, cc="49")
toner("Peach Toner Multipack compatible with Brother TN-247", "Peach", 11999, "TN-247", ["black", "cyan", "magenta", "yellow"], 3000, True, 900, BRO_COL, 42.0, cc="76")


def ink(name, brand, price, model, colour, pages, ml, xl, listed, width, state=None, contra=None, cc="0"):
    specs = [cat("cartridge_model", "Cartridge model", model),
             cat("colour", "Colour", colour),
             perf("page_yield", "Page yield (ISO/IEC 24711)", "pages", pages, tol=5),
             perf("volume_ml", "Ink volume", "ml", ml, tol=3),
             cat("xl", "High-capacity (XL)", xl)]
    col = colour if isinstance(colour, str) else "/".join(colour)
    desc = "%s ink cartridge (%s) for the %s. About %d pages." % (
        model, col, " / ".join(short(s) for s in listed), pages)
    P("printer-ink", "ink-cartridge", name, brand, price, specs, dims={"cartridge_width": width}, listed=listed,
      state=state, contra=contra, gtin_cc=cc, desc=desc)


HP9010 = ["hp-officejet-pro-9010"]
HP8022 = ["hp-officejet-pro-8022e"]
CANON = ["canon-pixma-ts5150"]
EPSON = ["epson-workforce-wf-2930"]
CMY = ["cyan", "magenta", "yellow"]
CMYK = ["black", "cyan", "magenta", "yellow"]
ink("HP 963 Black Original Ink Cartridge (3JA26AE)", "HP", 3299, "HP 963", "black", 1000, 24.09, False, HP9010, 33.0)
ink("HP 963XL High Yield Black Original Ink Cartridge (3JA30AE)", "HP", 5499, "HP 963XL", "black", 2000, 47.86, True, HP9010, 33.0)
ink("HP 963 Cyan/Magenta/Yellow Original Ink Cartridges (3-pack)", "HP", 6499, "HP 963", CMY, 700, 32.0, False, HP9010, 33.0)
ink("Peach Ink Cartridge compatible with HP 963XL Black", "Peach", 2499, "HP 963XL", "black", 2000, 50.0, True, HP9010, 33.0, cc="76")
ink("Prestige Cartridge HP 963XL Compatible Multipack (4-pack)", "Prestige Cartridge", 3999, "HP 963XL", CMYK, 1600, 110.0, True, HP9010, 33.0,
    state="contradicted", contra=("volume_ml", 93.0), cc="50")
ink("HP 912 Black Original Ink Cartridge (3YL80AE)", "HP", 2199, "HP 912", "black", 300, 8.29, False, HP8022, 29.5)
ink("HP 912XL High Yield Black Original Ink Cartridge (3YL84AE)", "HP", 3999, "HP 912XL", "black", 825, 21.7, True, HP8022, 29.5)
ink("Peach Multipack compatible with HP 912XL", "Peach", 3499, "HP 912XL", CMYK, 825, 62.0, True, HP8022, 29.5, cc="76")
ink("Canon PG-545 Black Ink Cartridge", "Canon", 1799, "PG-545", "black", 180, 8.0, False, CANON, 27.0, cc="49")
ink("Canon CL-546 Colour Ink Cartridge", "Canon", 2099, "CL-546", CMY, 180, 8.0, False, CANON, 27.0, cc="49")
ink("Canon PG-545XL High Yield Black Ink Cartridge", "Canon", 2699, "PG-545XL", "black", 400, 15.0, True, CANON, 27.0, cc="49")
ink("Jet Tec Ink Cartridge compatible with Canon PG-545XL", "Jet Tec", 1399, "PG-545XL", "black", 400, 15.0, True, CANON, 27.0, cc="50")
ink("Epson 604 Pineapple Black Ink Cartridge", "Epson", 1399, "604", "black", 150, 3.4, False, EPSON, 12.5, cc="87")
ink("Epson 604XL Pineapple Black Ink Cartridge", "Epson", 2899, "604XL", "black", 500, 8.9, True, EPSON, 12.5, cc="87")
ink("Epson 604 Pineapple Multipack (4 colours)", "Epson", 4299, "604", CMYK, 150, 11.8, False, EPSON, 12.5, cc="87")
ink("Peach Multipack compatible with Epson 604XL", "Peach", 2799, "604XL", CMYK, 500, 34.0, True, EPSON, 12.5, cc="76")

# --------------------------------------------------------------------------
# chargers-cables
# --------------------------------------------------------------------------
PHONES = ["apple-iphone-15", "apple-iphone-13", "samsung-galaxy-s24", "google-pixel-8", "fairphone-5"]
LAPTOPS = ["apple-macbook-air-13-m2", "dell-xps-13-9340", "lenovo-thinkpad-x1-carbon-gen-11", "framework-laptop-13"]
LOWV_BLOCK = None  # laptops reject low-voltage chargers through the measured pd_voltage row


def charger(name, brand, price, watts, ports, pps, maxv, gan, weight, listed, checked_not=(),
            state=None, contra=None, cc="0"):
    specs = [perf("power_w", "Maximum output power", "W", watts),
             cat("ports", "Ports", ports),
             cat("usb_pd", "USB Power Delivery", True),
             cat("pps", "PPS support", pps),
             cat("max_voltage_v", "Highest USB-PD voltage", maxv, "V"),
             cat("gan", "GaN technology", gan),
             info("weight_g", "Weight", weight, "g")]
    desc = "%d W USB-PD charger with %s. Supplies up to %d V, %s." % (
        watts, " + ".join(ports) if len(ports) > 1 else "one %s port" % ports[0], maxv,
        "enough for USB-C laptops" if maxv >= 20 and watts >= 45 else
        ("enough for phones and small laptops" if maxv >= 20 else "meant for phones and tablets"))
    P("chargers-cables", "charger", name, brand, price, specs, dims={"pd_voltage": float(maxv)}, listed=listed,
      state=state, contra=contra, gtin_cc=cc, desc=desc, no_auto=True,
      blockers={s: None for s in checked_not})


ALL_USB_C = PHONES + LAPTOPS
charger("Anker 735 Charger (Nano II 65W)", "Anker", 4999, 65, ["USB-C", "USB-C", "USB-A"], True, 20, True, 130,
        ["apple-iphone-15", "samsung-galaxy-s24", "google-pixel-8", "apple-macbook-air-13-m2", "dell-xps-13-9340", "framework-laptop-13"])
charger("Anker 511 Charger (Nano 3, 30W)", "Anker", 2499, 30, ["USB-C"], True, 20, True, 40,
        ["apple-iphone-15", "apple-iphone-13", "google-pixel-8", "fairphone-5", "apple-macbook-air-13-m2"])
charger("Apple 20W USB-C Power Adapter", "Apple", 2499, 20, ["USB-C"], False, 9, False, 58,
        ["apple-iphone-15", "apple-iphone-13"], checked_not=["apple-macbook-air-13-m2"], cc="19")
charger("Apple 35W Dual USB-C Port Compact Power Adapter", "Apple", 6499, 35, ["USB-C", "USB-C"], False, 20, False, 150,
        ["apple-iphone-15", "apple-iphone-13", "apple-macbook-air-13-m2"], cc="19")
charger("Apple 70W USB-C Power Adapter", "Apple", 6499, 70, ["USB-C"], False, 20, False, 200,
        ["apple-macbook-air-13-m2", "apple-iphone-15"], cc="19")
charger("Samsung 25W Super Fast Charger EP-TA800", "Samsung", 1999, 25, ["USB-C"], True, 9, False, 60,
        ["samsung-galaxy-s24", "google-pixel-8"], checked_not=["dell-xps-13-9340"], cc="88")
charger("Samsung 45W Super Fast Charger EP-T4510", "Samsung", 3999, 45, ["USB-C"], True, 20, False, 95,
        ["samsung-galaxy-s24", "dell-xps-13-9340", "lenovo-thinkpad-x1-carbon-gen-11"], cc="88")
charger("Google 30W USB-C Charger", "Google", 2999, 30, ["USB-C"], True, 20, False, 70,
        ["google-pixel-8", "fairphone-5", "samsung-galaxy-s24"], cc="0")
charger("Ugreen Nexode 65W USB-C Charger", "Ugreen", 3999, 65, ["USB-C", "USB-C", "USB-A"], True, 20, True, 125,
        ["apple-iphone-15", "samsung-galaxy-s24", "lenovo-thinkpad-x1-carbon-gen-11", "dell-xps-13-9340", "framework-laptop-13"],
        state="contradicted", contra=("power_w", 58.5), cc="69")
charger("Ugreen Nexode 100W USB-C Charger", "Ugreen", 5999, 100, ["USB-C", "USB-C", "USB-C", "USB-A"], True, 20, True, 230,
        ["apple-macbook-air-13-m2", "lenovo-thinkpad-x1-carbon-gen-11", "framework-laptop-13", "fairphone-5"], cc="69")
charger("Belkin BoostCharge Pro 65W Dual USB-C Charger", "Belkin", 5499, 65, ["USB-C", "USB-C"], True, 20, True, 110,
        ["apple-iphone-15", "apple-macbook-air-13-m2", "dell-xps-13-9340"], cc="74")
charger("Lenovo 65W USB-C Travel Adapter", "Lenovo", 4999, 65, ["USB-C"], False, 20, False, 170,
        ["lenovo-thinkpad-x1-carbon-gen-11", "framework-laptop-13", "dell-xps-13-9340"], cc="19")
charger("Fairphone Dual Port Charger 30W", "Fairphone", 3499, 30, ["USB-C", "USB-A"], True, 20, False, 80,
        ["fairphone-5", "google-pixel-8"], cc="87")


def cable(name, brand, price, length, watts, a, b, braided, gbps, listed, checked_not=(), mfi=None,
          state=None, contra=None, cc="0"):
    specs = [perf("length_m", "Length", "m", length),
             perf("max_power_w", "Maximum charging power", "W", watts),
             cat("connector_a", "Connector A", a),
             cat("connector_b", "Connector B", b),
             cat("braided", "Braided", braided),
             info("data_speed_gbps", "Data speed", gbps, "Gbit/s")]
    if mfi is not None:
        specs.append(cat("mfi_certified", "MFi certified", mfi))
    desc = "%s to %s cable, %s m, rated for %d W charging.%s" % (
        a, b, ("%.2f" % length).rstrip("0").rstrip("."), watts, " Braided jacket." if braided else "")
    P("chargers-cables", "cable", name, brand, price, specs,
      dims={"plug_width": 8.25 if b == "USB-C" else 7.70}, listed=listed, state=state, contra=contra,
      gtin_cc=cc, desc=desc, no_auto=True, blockers={s: None for s in checked_not})


USBC_DEV = ["apple-iphone-15", "samsung-galaxy-s24", "google-pixel-8", "fairphone-5"] + LAPTOPS
cable("Apple USB-C to Lightning Cable (1 m)", "Apple", 2499, 1.0, 27, "USB-C", "Lightning", False, 0.48,
      ["apple-iphone-13"], checked_not=["apple-iphone-15"], mfi=True, cc="19")
cable("Apple 240W USB-C Charge Cable (2 m)", "Apple", 3499, 2.0, 240, "USB-C", "USB-C", True, 0.48,
      ["apple-macbook-air-13-m2", "apple-iphone-15", "dell-xps-13-9340", "framework-laptop-13"], checked_not=["apple-iphone-13"], cc="19")
cable("Apple 60W USB-C Woven Charge Cable (1 m)", "Apple", 2499, 1.0, 60, "USB-C", "USB-C", True, 0.48,
      ["apple-iphone-15", "apple-macbook-air-13-m2", "samsung-galaxy-s24"], cc="19")
cable("Anker 322 USB-C to USB-C Cable (0.9 m, 60W)", "Anker", 999, 0.9, 60, "USB-C", "USB-C", True, 0.48,
      ["apple-iphone-15", "google-pixel-8", "fairphone-5"], checked_not=["apple-iphone-13"])
cable("Anker 541 USB-C to Lightning Cable (0.9 m)", "Anker", 1599, 0.9, 27, "USB-C", "Lightning", False, 0.48,
      ["apple-iphone-13"], checked_not=["google-pixel-8", "apple-iphone-15"], mfi=True)
cable("Ugreen USB-C to USB-C Cable 100W (2 m)", "Ugreen", 1299, 2.0, 100, "USB-C", "USB-C", True, 0.48,
      ["lenovo-thinkpad-x1-carbon-gen-11", "dell-xps-13-9340", "framework-laptop-13", "samsung-galaxy-s24"],
      state="contradicted", contra=("length_m", 1.82), cc="69")
cable("Belkin BoostCharge USB-C to USB-C Cable (1 m)", "Belkin", 1999, 1.0, 60, "USB-C", "USB-C", False, 0.48,
      ["apple-iphone-15", "samsung-galaxy-s24", "google-pixel-8"], cc="74")
cable("Samsung EP-DN975 USB-C Cable 5A (1 m)", "Samsung", 1999, 1.0, 100, "USB-C", "USB-C", False, 0.48,
      ["samsung-galaxy-s24", "dell-xps-13-9340", "lenovo-thinkpad-x1-carbon-gen-11"], cc="88")
cable("Amazon Basics USB-C to Lightning Cable (1.8 m, MFi)", "Amazon Basics", 1399, 1.8, 20, "USB-C", "Lightning", False, 0.48,
      ["apple-iphone-13"], checked_not=["apple-iphone-15", "samsung-galaxy-s24"], mfi=True)
cable("Baseus Superior USB-C Cable 100W (1 m)", "Baseus", 899, 1.0, 100, "USB-C", "USB-C", False, 0.48,
      ["samsung-galaxy-s24", "google-pixel-8", "dell-xps-13-9340", "lenovo-thinkpad-x1-carbon-gen-11"], cc="69")
cable("Cable Matters USB4 Cable 240W (1 m)", "Cable Matters", 2999, 1.0, 240, "USB-C", "USB-C", False, 40,
      ["apple-macbook-air-13-m2", "framework-laptop-13", "dell-xps-13-9340"])
cable("Anker PowerLine III Flow USB-C to USB-C (1.8 m)", "Anker", 1899, 1.8, 100, "USB-C", "USB-C", False, 0.48,
      ["apple-iphone-15", "fairphone-5", "lenovo-thinkpad-x1-carbon-gen-11"])
cable("Fairphone USB-C 3.1 Cable (1.2 m)", "Fairphone", 1999, 1.2, 60, "USB-C", "USB-C", False, 10,
      ["fairphone-5", "google-pixel-8"], checked_not=["apple-iphone-13"], cc="87")

# --------------------------------------------------------------------------
# batteries
# --------------------------------------------------------------------------
MAKITA = ["makita-dhp482", "makita-ddf485"]


def toolbatt(name, brand, price, mah, weight, indicator, rail, listed, state=None, contra=None, cc="49"):
    specs = [perf("capacity_mah", "Capacity", "mAh", mah),
             cat("voltage_v", "Voltage", 18, "V"),
             cat("chemistry", "Chemistry", "Li-ion"),
             cat("charge_indicator", "Charge level indicator", indicator),
             info("weight_g", "Weight", weight, "g")]
    desc = "18 V %.1f Ah slide battery for the %s.%s" % (
        mah / 1000.0, " and ".join(short(s) for s in listed), " Built-in charge level indicator." if indicator else "")
    P("batteries", "battery", name, brand, price, specs,
      dims={"battery_voltage": 18.0, "rail_width": rail}, listed=listed, state=state, contra=contra,
      gtin_cc=cc, desc=desc)


toolbatt("Makita BL1850B 18V 5.0Ah LXT Battery", "Makita", 8999, 5000, 620, True, 49.8, MAKITA, cc="00")
toolbatt("Makita BL1840B 18V 4.0Ah LXT Battery", "Makita", 7499, 4000, 610, True, 49.8, MAKITA, cc="00")
toolbatt("Makita BL1830B 18V 3.0Ah LXT Battery", "Makita", 5999, 3000, 470, True, 49.8, MAKITA, cc="00")
toolbatt("Waitley BL1850 Replacement Battery for Makita 18V 5.0Ah", "Waitley", 3699, 5000, 640, True, 49.8, MAKITA,
         state="contradicted", contra=("capacity_mah", 3920), cc="69")
toolbatt("Powerextra 18V 6.0Ah Battery for Makita LXT", "Powerextra", 4599, 6000, 700, True, 49.8, MAKITA, cc="69")
toolbatt("Bosch Professional GBA 18V 4.0Ah Battery", "Bosch", 7999, 4000, 580, True, 55.4, ["bosch-gsr-18v-55"], cc="40")
toolbatt("Bosch Professional ProCORE18V 8.0Ah Battery", "Bosch", 17999, 8000, 1000, True, 55.4, ["bosch-gsr-18v-55"], cc="40")
toolbatt("Topbatt 18V 5.0Ah Battery for Bosch Professional", "Topbatt", 3999, 5000, 650, True, 55.4, ["bosch-gsr-18v-55"], cc="69")
toolbatt("DeWalt DCB184 18V XR 5.0Ah Battery", "DeWalt", 8999, 5000, 620, True, 57.2, ["dewalt-dcd796"], cc="50")
toolbatt("DeWalt DCB182 18V XR 4.0Ah Battery", "DeWalt", 7999, 4000, 610, True, 57.2, ["dewalt-dcd796"], cc="50")
toolbatt("Waitley DCB184 Replacement Battery for DeWalt 18V 6.0Ah", "Waitley", 3999, 6000, 690, False, 57.2, ["dewalt-dcd796"], cc="69")
toolbatt("Einhell Power X-Change 18V 4.0Ah Battery", "Einhell", 5999, 4000, 630, True, 61.0, ["einhell-te-cd-18-40-li"], cc="40")
toolbatt("Einhell Power X-Change 18V 2.5Ah Battery", "Einhell", 3999, 2500, 430, True, 61.0, ["einhell-te-cd-18-40-li"], cc="40")
toolbatt("Einhell Power X-Change Plus 18V 5.2Ah Battery", "Einhell", 7999, 5200, 680, True, 61.0, ["einhell-te-cd-18-40-li"], cc="40")

P("batteries", "battery", "Fairphone 5 Battery F5BATT", "Fairphone", 3995,
  [perf("capacity_mah", "Capacity", "mAh", 4200), cat("voltage_v", "Voltage", 3.87, "V"),
   cat("chemistry", "Chemistry", "Li-ion polymer"), cat("user_replaceable", "User-replaceable", True),
   info("weight_g", "Weight", 52, "g")],
  dims={"battery_length": 74.0, "battery_width": 58.5}, listed=["fairphone-5"], gtin_cc="87",
  blockers={"google-pixel-8": None, "samsung-galaxy-s24": None},
  desc="Replacement 4200 mAh battery for the Fairphone 5. Swappable without tools.", no_auto=True)


def cell(name, brand, price, size, chem, volts, rechargeable, pack, mah, shelf, state=None, contra=None, cc="40"):
    specs = [cat("size", "Size", size),
             cat("chemistry", "Chemistry", chem),
             cat("voltage_v", "Nominal voltage", volts, "V"),
             cat("rechargeable", "Rechargeable", rechargeable),
             cat("pack_count", "Cells per pack", pack),
             perf("capacity_mah", "Capacity", "mAh", mah)]
    if shelf is not None:
        specs.append(info("shelf_life_years", "Shelf life", shelf, "years"))
    desc = "Pack of %d %s %s cells (%s V%s)." % (
        pack, size, chem, volts, ", rechargeable" if rechargeable else "")
    if mah:
        desc += " Rated %d mAh per cell." % mah
    P("batteries", "cell", name, brand, price, specs, compat=False, state=state, contra=contra, gtin_cc=cc, desc=desc)


cell("Varta Longlife Power AA Batteries (8-pack)", "Varta", 799, "AA", "alkaline", 1.5, False, 8, None, 10)
cell("Duracell Plus AA Batteries (12-pack)", "Duracell", 1399, "AA", "alkaline", 1.5, False, 12, None, 12, cc="54")
cell("Energizer Max AAA Batteries (8-pack)", "Energizer", 899, "AAA", "alkaline", 1.5, False, 8, None, 10, cc="0")
cell("Panasonic Eneloop AA 2000 mAh (4-pack)", "Panasonic", 1599, "AA", "NiMH", 1.2, True, 4, 2000, None, cc="50")
cell("Panasonic Eneloop Pro AAA 930 mAh (4-pack)", "Panasonic", 1799, "AAA", "NiMH", 1.2, True, 4, 930, None, cc="50")
cell("IKEA LADDA Rechargeable AA 2450 mAh (4-pack)", "IKEA", 899, "AA", "NiMH", 1.2, True, 4, 2450, None, cc="73",
     state="contradicted", contra=("capacity_mah", 2180))
cell("GP ReCyko+ AAA 850 mAh (4-pack)", "GP", 1099, "AAA", "NiMH", 1.2, True, 4, 850, None, cc="48")
cell("Samsung INR18650-35E Li-ion Cell 3500 mAh", "Samsung", 599, "18650", "Li-ion", 3.6, True, 1, 3500, None, cc="88")
cell("Molicel P28A 21700 Li-ion Cell 2800 mAh", "Molicel", 799, "21700", "Li-ion", 3.6, True, 1, 2800, None, cc="47")
cell("Varta CR2032 Lithium Coin Cells (2-pack)", "Varta", 399, "CR2032", "lithium", 3.0, False, 2, 230, 10)
cell("Duracell 9V Plus Battery (2-pack)", "Duracell", 899, "9V", "alkaline", 9.0, False, 2, None, 5, cc="54")

# --------------------------------------------------------------------------
# Build
# --------------------------------------------------------------------------
CAT_PREFIX = {"hand-soap": "HS", "air-filters": "AF", "vacuum-parts": "VP", "coffee-kitchen": "CK",
              "printer-ink": "PI", "chargers-cables": "CC", "batteries": "BT"}
PT_KINDS = {
    ("air-filters", "filter"): {"air-purifier"},
    ("vacuum-parts", "filter"): {"vacuum-cleaner"},
    ("vacuum-parts", "dust-bag"): {"vacuum-cleaner"},
    ("vacuum-parts", "battery"): {"vacuum-cleaner"},
    ("vacuum-parts", "accessory-kit"): {"vacuum-cleaner"},
    ("coffee-kitchen", "descaler"): {"coffee-machine"},
    ("coffee-kitchen", "filter"): {"coffee-machine"},
    ("coffee-kitchen", "jug-filter"): {"water-jug"},
    ("printer-ink", "toner"): {"printer"},
    ("printer-ink", "ink-cartridge"): {"printer"},
    ("chargers-cables", "charger"): {"phone", "laptop"},
    ("chargers-cables", "cable"): {"phone", "laptop"},
    ("batteries", "battery"): {"cordless-tool", "phone"},
}
PART_NOUN = {"filter": "filter", "dust-bag": "dust bag", "battery": "battery", "accessory-kit": "accessory kit",
             "descaler": "descaler", "jug-filter": "filter cartridge", "toner": "toner cartridge",
             "ink-cartridge": "ink cartridge", "charger": "charger", "cable": "cable"}
NODES = ["lab-utrecht-01", "lab-utrecht-02", "lab-gent-01", "lab-koeln-01"]
CC_PAD = {}


def gtin_for(cc, brand, used):
    key = (cc, brand)
    if key not in CC_PAD:
        CC_PAD[key] = cc + "".join(str(rng.randrange(10)) for _ in range(7 - len(cc)))
    while True:
        body = CC_PAD[key] + "".join(str(rng.randrange(10)) for _ in range(5))
        g = body + str(gs1_check(body))
        if g not in used:
            used.add(g)
            return g


def gs1_check(body12):
    s = sum(int(ch) * (3 if i % 2 else 1) for i, ch in enumerate(body12))
    return (10 - s % 10) % 10


def precision(row, ref=None):
    u = row["unit"]
    if u in ("W",):
        return 1
    if u in ("m", "%"):
        return 2
    ref = row["claimed"] if row["claimed"] is not None else ref
    return 0 if isinstance(ref, int) else 2


def rnd(x, p):
    return int(round(x)) if p == 0 else round(x, p)


def contradicts(row, measured):
    c = row["claimed"]
    if c is None or measured is None:
        return False
    if row["kind"] == "performance":
        return measured < c * (1 - row["tolerance_pct"] / 100.0)
    if row["kind"] == "categorical":
        if isinstance(c, list) or isinstance(measured, list):
            return not (isinstance(c, list) and isinstance(measured, list) and set(c) == set(measured))
        return measured != c or type(measured) is not type(c)
    return False


ALT_STRINGS = {
    "format": {"liquid": "gel", "foam": "liquid", "gel": "liquid", "cream": "liquid", "tablets": "powder",
               "powder": "tablets"},
    "fragrance": None, "packaging": None,
}


def contra_value(row):
    c = row["claimed"]
    if row["kind"] == "performance":
        p = precision(row)
        lo = max(2.5 * row["tolerance_pct"], 6.0)
        return rnd(c * (1 - rng.uniform(lo, 18.0) / 100.0), p)
    if isinstance(c, bool):
        return not c
    if isinstance(c, list):
        return c[:-1] if len(c) > 1 else c + ["other"]
    if isinstance(c, int):
        return c - 1 if c > 1 else 2
    if isinstance(c, str):
        return ALT_STRINGS.get(row["spec"], {}) and ALT_STRINGS[row["spec"]].get(c, c + " (different)") or c + " (different)"
    raise AssertionError("cannot contradict %r" % (row,))


def verified_value(row, truth):
    """Lab value for a row that must not contradict."""
    if row["kind"] == "performance":
        base = row["claimed"] if row["claimed"] is not None else truth
        p = precision(row, truth)
        tol = row["tolerance_pct"]
        if row["unit"] == "%":  # efficiencies: cannot exceed 100 %
            v = rnd(base + rng.uniform(-0.007 * tol * base, max(0.0, 99.99 - base)), p)
        else:
            v = rnd(base * (1 + rng.uniform(-0.7 * tol, 3.0) / 100.0), p)
        if row["claimed"] is not None and contradicts(row, v):
            v = row["claimed"]
        return v
    if row["kind"] == "info":
        if isinstance(truth, (int, float)) and not isinstance(truth, bool):
            p = 0 if isinstance(truth, int) else 2
            return rnd(truth * (1 + rng.uniform(-2.0, 2.0) / 100.0), p)
        return truth
    if isinstance(truth, list) and len(truth) > 1 and rng.random() < 0.4:
        t = list(truth)
        t.reverse()  # same set, different order: must compare as a set
        return t
    return truth


NEVER_UNCLAIMED = {"pack_count", "volume_ml", "cartridge_model", "size", "connector_a", "connector_b", "colour",
                   "voltage_v", "format", "tablet_count", "pack_contents", "ports"}
UNCLAIMED_TRUTH = {  # what the lab finds on rows the merchant made no claim about
    "capacity_mah": lambda p: {"AA": 2850, "AAA": 1200, "9V": 550}.get(p, 2850),
}


def build():
    used_gtin = set()
    merchants = []
    for (mid, name, cc, city, ot, acc, cats, base_days, style) in MERCHANTS_SRC:
        merchants.append(dict(id=mid, name=name, country=cc, city=city, on_time_rate=ot, accuracy_rate=acc))
    M = {m[0]: m for m in MERCHANTS_SRC}

    devices = [dict(slug=x["slug"], name=x["name"], brand=x["brand"], kind=x["kind"], aliases=x["aliases"])
               for x in DEVICES_SRC]

    # ---- assign SKUs -----------------------------------------------------
    counters = {}
    for p in PRODUCTS_SRC:
        pre = CAT_PREFIX[p["category"]]
        counters[pre] = counters.get(pre, 0) + 1
        p["sku"] = "%s-%04d" % (pre, counters[pre])

    # ---- verification states ---------------------------------------------
    by_cat = {}
    for p in PRODUCTS_SRC:
        by_cat.setdefault(p["category"], []).append(p)
    forced_soap = {"Palmolive Hygiene-Plus Hand Wash Refill 500 ml": ("volume_ml", 455),
                   "Fa Hygiene & Fresh Hand Soap 250 ml": ("vegan", False)}
    for p in PRODUCTS_SRC:
        if p["name"] in forced_soap:
            p["state"] = "contradicted"
            p["contra"] = forced_soap[p["name"]]
            if p["contra"][0] == "vegan":
                for r in p["specs"]:
                    if r["spec"] == "vegan":
                        r["claimed"] = True
    for c, items in sorted(by_cat.items()):
        free = [p for p in items if p["state"] is None]
        rng.shuffle(free)
        n = len(items)
        n_pending = round(n * 0.21)
        n_contra = max(0, 3 - sum(1 for p in items if p["state"] == "contradicted"))
        for i, p in enumerate(free):
            if i < n_pending:
                p["state"] = "pending"
            elif i < n_pending + n_contra:
                p["state"] = "contradicted"
            else:
                p["state"] = "verified"

    # ---- availability, offers -------------------------------------------
    order = list(PRODUCTS_SRC)
    rng.shuffle(order)
    out_of_stock = set(p["sku"] for p in order[:7])
    single = set(p["sku"] for p in order[7:7 + 50])

    products = []
    for p in PRODUCTS_SRC:
        sku = p["sku"]
        # merchants
        eligible = sorted(m[0] for m in MERCHANTS_SRC if p["category"] in m[6])
        n_off = 1 if sku in single else rng.choice([2, 2, 3, 3, 3, 4, 4, 5])
        mids = rng.sample(eligible, n_off)
        offers = []
        used_prices = set()
        for k, mid in enumerate(mids):
            while True:
                f = 1 + rng.uniform(-0.04, 0.07)
                if p["price"] < 600:  # cheap items: cent-level differences
                    price = int(round(p["price"] * f))
                else:
                    price = int(round(p["price"] * f / 10.0)) * 10 - 1
                if p["category"] == "hand-soap":
                    price = min(max(price, 149), 999)
                if price not in used_prices:
                    used_prices.add(price)
                    break
            days = min(7, M[mid][7] + rng.choice([0, 0, 0, 1, 1, 2, 3]))
            if sku in out_of_stock:
                stock = 0
            else:
                r = rng.random()
                stock = rng.randint(1, 15) if r < 0.25 else rng.randint(16, 80)
            offers.append(dict(offer_id="%s-%s" % (sku, mid[2:]), merchant=mid, retail_price_cents=price,
                               delivery_days=days, stock=stock))
        if sku not in out_of_stock and len(offers) >= 3 and rng.random() < 0.3:
            offers[rng.randrange(1, len(offers))]["stock"] = 0
        if sku not in out_of_stock and all(o["stock"] == 0 for o in offers):
            offers[0]["stock"] = rng.randint(3, 40)
        offers.sort(key=lambda o: o["offer_id"])
        src_m = mids[0]
        state = p["state"]

        # ---- specs ---------------------------------------------------------
        rows = []
        for r in p["specs"]:
            row = dict(spec=r["spec"], label=r["label"], kind=r["kind"], unit=r["unit"], claimed=r["claimed"])
            if r["kind"] == "performance":
                row["tolerance_pct"] = r["tol"]
            row["_truth"] = r["claimed"]
            rows.append(row)
        for dim, val in sorted(p["dims"].items()):
            label, unit, tol, spec = DIMS[dim]
            if spec:
                row = dict(spec=spec, label=label, kind="categorical", unit=unit, claimed=val)
                row["_truth"] = p["true_dims"].get(dim, val)
                rows.append(row)
        # alkaline cells: no capacity claim
        for row in rows:
            if row["claimed"] is None:
                row["_truth"] = UNCLAIMED_TRUTH.get(row["spec"], lambda _: None)(
                    next((x["claimed"] for x in rows if x["spec"] == "size"), None))
        # unclaimed rows on ~30% of products
        protected = {c for c in [p["contra"][0] if p["contra"] else None] if c}
        protected |= {DIMS[k][3] for k in p["dims"] if DIMS[k][3]}
        if rng.random() < 0.27:
            cand = [r for r in rows if r["claimed"] is not None and r["spec"] not in protected
                    and r["kind"] != "performance" and r["spec"] not in NEVER_UNCLAIMED]
            for r in rng.sample(cand, min(len(cand), rng.choice([1, 1, 2]))):
                r["claimed"] = None
        if state == "contradicted":
            if p["contra"]:
                target = p["contra"][0]
            elif any(p["true_dims"].get(k) is not None for k in p["dims"]):
                target = None  # the dimension row itself contradicts
            else:
                perf_rows = [r for r in rows if r["kind"] == "performance" and r["claimed"] is not None]
                cat_rows = [r for r in rows if r["kind"] == "categorical" and r["claimed"] is not None
                            and r["spec"] not in protected and isinstance(r["claimed"], (bool, list))]
                pool = perf_rows if perf_rows and rng.random() < 0.75 else (cat_rows or perf_rows)
                target = rng.choice(pool)["spec"]
        else:
            target = None
            assert not p["true_dims"], "misfit product %s must be contradicted" % p["name"]
        unmeasured = 0
        for row in rows:
            truth = row.pop("_truth")
            if state == "pending":
                row["measured"] = None
                continue
            if row["spec"] == target:
                if p["contra"] and p["contra"][0] == target:
                    row["measured"] = p["contra"][1]
                else:
                    row["measured"] = contra_value(row)
                continue
            if row["kind"] == "categorical" and row["claimed"] is not None and truth != row["claimed"]:
                row["measured"] = truth  # misfit dimension
                continue
            if truth is None and row["claimed"] is None:
                row["measured"] = None
                continue
            if (row["kind"] != "performance" or row["claimed"] is None) and rng.random() < 0.07 \
                    and row["spec"] not in protected and unmeasured == 0:
                unmeasured += 1
                row["measured"] = None  # not measured
                continue
            row["measured"] = verified_value(row, truth)
        got = "pending" if state == "pending" else (
            "contradicted" if any(contradicts(r, r["measured"]) for r in rows) else "verified")
        assert got == state, "%s: intended %s, data says %s" % (p["name"], state, got)
        # key order
        rows = [{k: r[k] for k in ("spec", "label", "kind", "unit", "claimed", "measured", "tolerance_pct") if k in r}
                for r in rows]

        # ---- verification ----------------------------------------------------
        if state == "pending":
            verification = None
            measured_at = None
        else:
            measured_at = rand_dt(d(2, 1), d(11, 14))
            verification = dict(measured_at=ts(measured_at), node=rng.choice(NODES),
                                sample_size=rng.choice([1, 2, 3, 3, 3, 5]))

        # ---- performance ------------------------------------------------------
        products.append(dict(
            _src=p, sku=sku, name=p["name"], brand=p["brand"], category=p["category"], part_type=p["part_type"],
            rows=rows, offers=offers, verification=verification, measured_at=measured_at, src_m=src_m,
            state=state))

    # performance: products without data (new listings)
    pend = [x for x in products if x["state"] == "pending"]
    no_data = set(x["sku"] for x in rng.sample(pend, 6))
    out = []
    for x in products:
        p = x["_src"]
        sku = x["sku"]
        state = x["state"]
        if sku in no_data:
            perfd = dict(on_time_rate_90d=None, return_rate=0.0, wrong_item_rate=0.0, agent_orders_90d=0,
                         orders_per_week=[0] * 13)
        else:
            rates = [M[o["merchant"]][4] for o in x["offers"]]
            ot = round(min(0.99, max(0.75, sum(rates) / len(rates) + rng.uniform(-0.05, 0.03))), 3)
            if state == "contradicted":
                ret = round(rng.uniform(0.05, 0.15), 3)
            elif state == "pending":
                ret = round(rng.uniform(0.005, 0.06), 3)
            else:
                ret = round(rng.uniform(0.0, 0.045), 3)
            wrong = round(min(0.05, ret * rng.uniform(0.05, 0.4)), 3)
            if p["true_dims"]:
                wrong = round(min(0.05, ret * 0.6), 3)
            weekly = max(1, int(rng.lognormvariate(2.2, 0.9)))
            trend = rng.uniform(-0.04, 0.06)
            weights = [max(0.05, 1 + trend * (w - 6)) for w in range(13)]
            total = sum(weights)
            opw = [max(0, int(round(weekly * 13 * wt / total + rng.gauss(0, weekly * 0.25)))) for wt in weights]
            perfd = dict(on_time_rate_90d=ot, return_rate=ret, wrong_item_rate=wrong,
                         agent_orders_90d=sum(opw), orders_per_week=opw)

        # ---- gtin ---------------------------------------------------------------
        gtin = None if rng.random() < 0.15 else gtin_for(p["gtin_cc"] or "87", p["brand"], used_gtin)

        # ---- source ---------------------------------------------------------------
        src_m = x["src_m"]
        pid = merchant_pid(M[src_m][8])
        slug = "".join(ch if ch.isalnum() else "-" for ch in p["name"].lower().replace("×", "x"))
        slug = "-".join(filter(None, slug.split("-")))[:70].rstrip("-")
        slug = slug.encode("ascii", "ignore").decode()
        notes = []
        for r in x["rows"]:
            if r["claimed"] is None and len(notes) < 2:
                notes.append("No %s stated on the product page" % r["label"].lower())
        extra_notes = ["Specifications taken from the product page and the manufacturer datasheet",
                       "Price shown includes VAT", "Image gallery shows the retail packaging",
                       "Title and bullet points disagree on the pack size; bullet points used",
                       "Product page lists the manufacturer part number only in the description",
                       "Merchant page was in %s" % {"NL": "Dutch", "BE": "Dutch", "DE": "German"}[M[src_m][2]]]
        while rng.random() < 0.5 and len(notes) < 3:
            n = rng.choice(extra_notes)
            if n not in notes:
                notes.append(n)
        avail = "out_of_stock" if all(o["stock"] == 0 for o in x["offers"]) else "in_stock"
        source = dict(url="https://%s/p/%s-%s" % (HOSTS[src_m], slug, pid.lower()), notes=notes,
                      checked_at=ts(rand_dt(d(11, 10), d(11, 19, 23))), product_id=pid, availability=avail)

        # ---- compatibility ------------------------------------------------------
        compat = build_compat(p, x)

        images = ["https://img.agentshop-demo.example/p/%s-%d.jpg" % (sku, i + 1)
                  for i in range(rng.choice([1, 1, 2, 2, 3]))]
        out.append(dict(
            sku=sku, gtin=gtin, name=p["name"], brand=p["brand"], category=p["category"], part_type=p["part_type"],
            description=p["desc"], image_urls=images, source=source, verification=x["verification"],
            specs=x["rows"], performance=perfd, offers=x["offers"], compatibility=compat))
    out.sort(key=lambda q: q["sku"])
    merchants.sort(key=lambda m: m["id"])
    devices.sort(key=lambda v: v["slug"])
    return merchants, devices, out


def decl_date():
    return rand_dt(d(1, 15), d(9, 30), step_min=24 * 60).replace(hour=0, minute=0)


def build_compat(p, x):
    if not p["compat"]:
        return []
    kinds = PT_KINDS[(p["category"], p["part_type"])]
    pt = p["part_type"]
    noun = PART_NOUN[pt]
    pending = x["state"] == "pending"
    checked = list(p["listed"]) + [s for s in p["blockers"] if s not in p["listed"]]
    # automatic near-miss checks against other devices of the right kind
    if not p["no_auto"] and (rng.random() < 0.55 or not p["listed"]):
        brands = {DEV[s]["brand"] for s in p["listed"]}
        lkinds = {DEV[s]["kind"] for s in p["listed"]} or kinds
        cands = [v for v in DEVICES_SRC if v["kind"] in lkinds and v["slug"] not in checked
                 and pt in v["slots"]]
        cands.sort(key=lambda v: (v["brand"] not in brands, v["slug"]))
        pick = []
        for v in cands:
            slot = v["slots"].get(pt)
            if slot:
                shared = [k for k in p["dims"] if k in slot[0]]
                vals = {k: p["true_dims"].get(k, p["dims"][k]) for k in shared}
                if shared and not pending and all(abs(vals[k] - slot[0][k]) <= DIMS[k][2] for k in shared):
                    continue  # would physically fit: not an informative negative
                if shared and pending and all(abs(p["dims"][k] - slot[0][k]) <= DIMS[k][2] for k in shared):
                    continue
            pick.append(v["slug"])
        nmax = 2 if not p["listed"] else rng.choice([1, 1, 2])
        # prefer same brand first, then one random other
        same = [s for s in pick if DEV[s]["brand"] in brands]
        other = [s for s in pick if DEV[s]["brand"] not in brands]
        if p["listed"]:
            chosen = same[:1] + ([rng.choice(other)] if other else [])
        else:
            chosen = rng.sample(other, min(2, len(other)))
        checked += chosen[:nmax]
    result = []
    for slug in checked:
        v = DEV[slug]
        slot = v["slots"].get(pt)
        ev = []
        if not pending and slot:
            m_at = x["measured_at"] + timedelta(minutes=rng.choice([20, 35, 50, 65]))
            by = x["verification"]["node"]
            for k in sorted(p["dims"]):
                if k not in slot[0]:
                    continue
                label, unit, tol, _ = DIMS[k]
                pv = p["true_dims"].get(k, p["dims"][k])
                dv = slot[0][k]
                if k in NEGOTIATED:
                    pv = min(pv, dv)
                ev.append(dict(dimension=k, label=label, method="measured", by=by, at=ts(m_at),
                               unit=unit, part_value=pv, device_value=dv, tolerance=tol))
        listed = slug in p["listed"]
        dshort = short(slug)
        if listed:
            if p["brand"] == v["brand"]:
                note = "Listed as a replacement %s for the %s" % (noun, dshort)
            else:
                note = "%s lists the %s as compatible" % (p["brand"], dshort)
        elif slot is None:
            note = "Not suitable: the %s %s" % (dshort, v["no_slot"].get(pt, "does not take this part"))
        else:
            note = "Not listed for the %s, which takes %s" % (dshort, slot[1])
            if pt == "charger":
                note = "The %s needs %s; this charger tops out at %g V" % (dshort, slot[1], p["dims"]["pd_voltage"])
            if pt == "cable":
                note = "The %s needs %s; this cable ends in %s" % (
                    dshort, slot[1], "Lightning" if p["dims"]["plug_width"] < 8 else "USB-C")
        ev.append(dict(dimension="model_list", label="Manufacturer parts list", method="declared",
                       by=p["declared_by"], at=ts(decl_date()), note=note))
        blk = p["blockers"].get(slug)
        if blk:
            ev.append(dict(dimension="manufacturer_restriction", label="Device maker restriction",
                           method="declared", by=blk[0], at=ts(decl_date()), note=blk[1]))
        out_tol = any(e["method"] == "measured" and abs(e["part_value"] - e["device_value"]) > e["tolerance"]
                      for e in ev)
        fits = listed and not out_tol and not blk
        checked_at = max(datetime.strptime(e["at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) for e in ev)
        checked_at += timedelta(minutes=rng.choice([5, 10, 15, 30]))
        result.append(dict(device=slug, fit_status="fits" if fits else "does_not_fit", checked_at=ts(checked_at),
                           evidence=ev))
    result.sort(key=lambda c: c["device"])
    return result


# --------------------------------------------------------------------------
# Invariants
# --------------------------------------------------------------------------
import re  # noqa: E402

CATEGORY_PARTS = {
    "hand-soap": {"hand-soap"}, "air-filters": {"filter"},
    "vacuum-parts": {"filter", "dust-bag", "battery", "accessory-kit"},
    "coffee-kitchen": {"descaler", "jug-filter", "filter"},
    "printer-ink": {"toner", "ink-cartridge"}, "chargers-cables": {"charger", "cable"},
    "batteries": {"battery", "cell"},
}
PART_TYPES = {"hand-soap", "filter", "battery", "charger", "cable", "descaler", "toner", "ink-cartridge",
              "jug-filter", "dust-bag", "accessory-kit", "cell"}
DEVICE_KINDS = ["vacuum-cleaner", "air-purifier", "coffee-machine", "water-jug", "printer", "phone", "laptop",
                "cordless-tool"]
SOAP_SPECS = {"use": "categorical", "vegan": "categorical", "format": "categorical", "glycerin": "categorical",
              "aloe_vera": "categorical", "fragrance": "categorical", "packaging": "categorical",
              "panthenol": "categorical", "paraben_free": "categorical", "silicone_free": "categorical",
              "volume_ml": "performance", "pack_count": "categorical", "bottle_volume_ml": "performance",
              "listed_volume_ml": "info", "pack_contents": "categorical"}
TS_RE = re.compile(r"^2026-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


class Fail(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Fail(msg)


def check_ts(s, what):
    need(isinstance(s, str) and TS_RE.match(s), "%s: bad timestamp %r" % (what, s))
    t = datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    need(YEAR_START <= t < CUTOFF, "%s: timestamp out of range %s" % (what, s))


def row_contradicts(r):
    c, m = r["claimed"], r["measured"]
    if c is None or m is None:
        return False
    if r["kind"] == "performance":
        return m < c * (1 - r["tolerance_pct"] / 100.0)
    if r["kind"] == "categorical":
        if isinstance(c, list) or isinstance(m, list):
            return not (isinstance(c, list) and isinstance(m, list) and set(c) == set(m))
        return m != c
    return False


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def validate(merchants, devices, products):
    # merchants
    need(len(merchants) >= 10, "need >= 10 merchants")
    ids = [m["id"] for m in merchants]
    need(len(set(ids)) == len(ids), "duplicate merchant id")
    for m in merchants:
        need(re.match(r"^m-[a-z0-9-]+$", m["id"]) and len(m["id"]) <= 30, "merchant id %s" % m["id"])
        need(m["country"] in ("NL", "BE", "DE"), "country %s" % m["country"])
        need(0.80 <= m["on_time_rate"] <= 0.99 and round(m["on_time_rate"], 3) == m["on_time_rate"], "on_time %s" % m)
        need(0.93 <= m["accuracy_rate"] <= 0.998 and round(m["accuracy_rate"], 3) == m["accuracy_rate"], "acc %s" % m)
        need(set(m) == {"id", "name", "country", "city", "on_time_rate", "accuracy_rate"}, "merchant keys")
    for cc in ("NL", "BE", "DE"):
        need(sum(m["country"] == cc for m in merchants) >= 3, "need 3 merchants in %s" % cc)
    need(len({m["city"] for m in merchants}) == len(merchants), "cities not unique")
    need(len({m["on_time_rate"] for m in merchants}) == len(merchants), "on_time rates not unique")
    need(len({m["accuracy_rate"] for m in merchants}) == len(merchants), "accuracy rates not unique")
    need(len({m["name"] for m in merchants}) == len(merchants), "merchant names not unique")
    mids = set(ids)

    # devices
    need(len(devices) >= 36, "need >= 36 devices")
    slugs = [v["slug"] for v in devices]
    need(len(set(slugs)) == len(slugs), "duplicate device slug")
    for v in devices:
        need(re.match(r"^[a-z0-9-]+$", v["slug"]) and len(v["slug"]) <= 60, "slug %s" % v["slug"])
        need(v["kind"] in DEVICE_KINDS, "kind %s" % v["kind"])
        need(0 <= len(v["aliases"]) <= 3, "aliases %s" % v["slug"])
        need(v["name"].startswith(v["brand"]), "device name should start with brand: %s" % v["name"])
    for k in DEVICE_KINDS:
        need(sum(v["kind"] == k for v in devices) >= 4, "need 4 devices of kind %s" % k)
    brands = {}
    for v in devices:
        brands[v["brand"]] = brands.get(v["brand"], 0) + 1
    need(any(n == 1 for n in brands.values()), "need a single-device brand")
    words = {}
    for v in devices:
        for w in set(v["name"].lower().split()):
            words[w] = words.get(w, 0) + 1
    need(words.get("dyson", 0) >= 2, "need ambiguous word 'dyson'")
    dkind = {v["slug"]: v["kind"] for v in devices}

    # products
    need(len(products) >= 170, "need >= 170 products")
    skus = [p["sku"] for p in products]
    need(len(set(skus)) == len(skus), "duplicate sku")
    need(skus == sorted(skus), "products not sorted")
    gtins = [p["gtin"] for p in products if p["gtin"] is not None]
    need(len(set(gtins)) == len(gtins), "duplicate gtin")
    null_gtin = sum(p["gtin"] is None for p in products) / len(products)
    need(0.08 <= null_gtin <= 0.22, "null gtin share %.2f" % null_gtin)
    offer_ids = set()
    n_low_stock = 0
    n_oos = 0
    n_single = 0
    n_multi = 0
    states = {"pending": 0, "verified": 0, "contradicted": 0}
    n_unclaimed = 0
    n_null_ot = 0
    fits_by_dev = {}
    nofit_by_dev = {}
    groups = {}
    for p in products:
        w = "product %s" % p["sku"]
        need(re.match(r"^[A-Z0-9-]{3,20}$", p["sku"]), w + " sku")
        if p["gtin"] is not None:
            g = p["gtin"]
            need(re.match(r"^\d{13}$", g) and gs1_check(g[:12]) == int(g[12]), w + " gtin %s" % g)
        need(p["category"] in CATEGORY_PARTS, w + " category")
        need(p["part_type"] in CATEGORY_PARTS[p["category"]], w + " part type")
        need(p["name"] and p["brand"], w + " name/brand")
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", p["description"].strip()) if s]
        need(1 <= len(sentences) <= 3 and p["description"].endswith("."), w + " description %r" % p["description"])
        need(1 <= len(p["image_urls"]) <= 3, w + " images")
        for u in p["image_urls"]:
            need(u.startswith("https://img.agentshop-demo.example/p/%s-" % p["sku"]), w + " image url")
        s = p["source"]
        need(set(s) == {"url", "notes", "checked_at", "product_id", "availability"}, w + " source keys")
        need(re.match(r"^https://[a-z0-9.-]+\.example/", s["url"]), w + " source url")
        check_ts(s["checked_at"], w + " source")
        need(s["availability"] in ("in_stock", "out_of_stock"), w + " availability")
        # offers
        offs = p["offers"]
        need(len(offs) >= 1, w + " offers")
        need(len({o["merchant"] for o in offs}) == len(offs), w + " offer merchants not distinct")
        if len(offs) > 1:
            need(len({o["retail_price_cents"] for o in offs}) == len(offs), w + " offer prices equal")
            lo, hi = min(o["retail_price_cents"] for o in offs), max(o["retail_price_cents"] for o in offs)
            need(hi <= lo * 1.15, w + " offer prices too far apart")
        for o in offs:
            need(re.match(r"^[A-Za-z0-9-]{1,60}$", o["offer_id"]), w + " offer id")
            need(o["offer_id"] not in offer_ids, w + " duplicate offer id")
            offer_ids.add(o["offer_id"])
            need(o["merchant"] in mids, w + " unknown merchant")
            need(1 <= o["delivery_days"] <= 7, w + " delivery days")
            need(0 <= o["stock"] <= 80, w + " stock")
            need(isinstance(o["retail_price_cents"], int) and o["retail_price_cents"] > 0, w + " price")
            if 1 <= o["stock"] <= 15:
                n_low_stock += 1
        if s["availability"] == "out_of_stock":
            n_oos += 1
            need(all(o["stock"] == 0 for o in offs), w + " out of stock with stock")
        else:
            need(any(o["stock"] > 0 for o in offs), w + " in stock without stock")
        if len(offs) == 1:
            n_single += 1
        elif 2 <= len(offs) <= 5:
            n_multi += 1
        lo_p, hi_p = PRICE_RANGE[(p["category"], p["part_type"])]
        for o in offs:
            need(lo_p <= o["retail_price_cents"] <= hi_p, w + " price %d outside %s" % (o["retail_price_cents"], (lo_p, hi_p)))
        # specs
        rows = p["specs"]
        need(3 <= len(rows) <= 8, w + " spec row count %d" % len(rows))
        need(len({r["spec"] for r in rows}) == len(rows), w + " duplicate spec")
        for r in rows:
            need(re.match(r"^[a-z][a-z0-9_]*$", r["spec"]) and r["label"], w + " spec name/label")
            need(r["kind"] in ("categorical", "performance", "info"), w + " spec kind")
            if r["kind"] == "performance":
                need(r["unit"] and "tolerance_pct" in r, w + " perf row needs unit/tolerance")
                need(r["claimed"] is None or is_num(r["claimed"]), w + " perf claimed numeric")
                need(r["measured"] is None or is_num(r["measured"]), w + " perf measured numeric")
            else:
                need("tolerance_pct" not in r, w + " tolerance on non-performance row")
            if r["kind"] == "categorical":
                for v in (r["claimed"], r["measured"]):
                    need(v is None or isinstance(v, (bool, str, int, float)) or
                         (isinstance(v, list) and all(isinstance(i, str) for i in v)), w + " categorical value")
            if r["kind"] == "info":
                for v in (r["claimed"], r["measured"]):
                    need(v is None or is_num(v) or isinstance(v, str), w + " info value")
        if any(r["claimed"] is None for r in rows):
            n_unclaimed += 1
        if p["category"] == "hand-soap":
            need(len(rows) >= 6, w + " hand soap needs >= 6 spec rows")
            for r in rows:
                need(r["spec"] in SOAP_SPECS and SOAP_SPECS[r["spec"]] == r["kind"], w + " soap spec %s" % r["spec"])
                if r["spec"] in ("use", "pack_contents"):
                    need(r["claimed"] is None or isinstance(r["claimed"], list), w + " soap array")
                if r["spec"] == "pack_count":
                    need(r["claimed"] is None or isinstance(r["claimed"], int), w + " pack_count int")
                if r["spec"].endswith("_ml"):
                    need(r["unit"] == "ml", w + " soap unit")
        ver = p["verification"]
        contra = [r for r in rows if row_contradicts(r)]
        if ver is None:
            need(all(r["measured"] is None for r in rows), w + " pending with measurements")
            st = "pending"
        else:
            need(set(ver) == {"measured_at", "node", "sample_size"}, w + " verification keys")
            check_ts(ver["measured_at"], w + " measured_at")
            measured = sum(r["measured"] is not None for r in rows)
            need(measured >= max(1, len(rows) - 2), w + " too few measured rows")
            st = "contradicted" if contra else "verified"
            if st == "verified":
                for r in rows:
                    if r["kind"] == "performance" and r["claimed"] is not None and r["measured"] is not None:
                        need(r["measured"] <= r["claimed"] * 1.04, w + " verified perf too high")
        p["_state"] = st
        states[st] += 1
        # performance
        pf = p["performance"]
        need(set(pf) == {"on_time_rate_90d", "return_rate", "wrong_item_rate", "agent_orders_90d",
                         "orders_per_week"}, w + " performance keys")
        if pf["on_time_rate_90d"] is None:
            n_null_ot += 1
        else:
            need(0.75 <= pf["on_time_rate_90d"] <= 0.99, w + " on_time_rate_90d")
        need(0 <= pf["return_rate"] <= 0.15, w + " return rate")
        need(0 <= pf["wrong_item_rate"] <= 0.05 and pf["wrong_item_rate"] <= pf["return_rate"], w + " wrong item rate")
        need(len(pf["orders_per_week"]) == 13 and all(isinstance(i, int) and i >= 0 for i in pf["orders_per_week"]),
             w + " orders_per_week")
        need(sum(pf["orders_per_week"]) == pf["agent_orders_90d"], w + " orders sum")
        # compatibility
        comp = p["compatibility"]
        kinds = PT_KINDS.get((p["category"], p["part_type"]))
        if p["category"] == "hand-soap" or p["part_type"] == "cell":
            need(comp == [], w + " should have no compatibility")
        elif p["part_type"] != "descaler":
            need(len(comp) >= 1, w + " needs compatibility")
        need(len({c["device"] for c in comp}) == len(comp), w + " duplicate device in compatibility")
        for c in comp:
            need(c["device"] in dkind, w + " unknown device %s" % c["device"])
            need(dkind[c["device"]] in kinds, w + " kind mismatch %s" % c["device"])
            need(c["fit_status"] in ("fits", "does_not_fit"), w + " fit_status")
            check_ts(c["checked_at"], w + " compat checked_at")
            need(c["evidence"], w + " no evidence")
            out_tol = False
            for e in c["evidence"]:
                need(all(k in e for k in ("dimension", "label", "method", "by", "at")), w + " evidence keys")
                check_ts(e["at"], w + " evidence at")
                need(e["at"] <= c["checked_at"], w + " evidence after checked_at")
                need(e["method"] in ("measured", "declared"), w + " evidence method")
                if e["method"] == "measured":
                    need(all(k in e for k in ("unit", "part_value", "device_value", "tolerance")), w + " measured keys")
                    need(p["_state"] != "pending", w + " pending product with measured evidence")
                    if abs(e["part_value"] - e["device_value"]) > e["tolerance"] + 1e-9:
                        out_tol = True
                else:
                    need(e.get("note"), w + " declared evidence needs note")
            if c["fit_status"] == "fits":
                need(not out_tol, w + " fits but measured out of tolerance (%s)" % c["device"])
                fits_by_dev.setdefault(c["device"], []).append(p)
                groups.setdefault((c["device"], p["part_type"]), set()).add(p["_state"])
            else:
                why = any(e["method"] == "declared" and re.search(r"^(Not|The)|rejects|not approved|only", e["note"])
                          for e in c["evidence"])
                need(out_tol or why, w + " does_not_fit without reason (%s)" % c["device"])
                nofit_by_dev.setdefault(c["device"], []).append(p)

    # global counts
    by_cat = {}
    by_pt = {}
    for p in products:
        by_cat[p["category"]] = by_cat.get(p["category"], 0) + 1
        by_pt[p["part_type"]] = by_pt.get(p["part_type"], 0) + 1
    need(set(by_cat) == set(CATEGORY_PARTS) and min(by_cat.values()) >= 15, "category counts %s" % by_cat)
    need(set(by_pt) == PART_TYPES and min(by_pt.values()) >= 4, "part type counts %s" % by_pt)
    n = len(products)
    need(0.15 <= states["pending"] / n <= 0.25, "pending share %s" % states)
    need(0.58 <= states["verified"] / n <= 0.72, "verified share %s" % states)
    need(states["contradicted"] >= 15, "contradicted count %s" % states)
    need(n_oos >= 5, "out of stock count %d" % n_oos)
    need(n_low_stock >= 15, "low stock offers %d" % n_low_stock)
    need(n_single >= 20, "single-offer products %d" % n_single)
    need(0.62 <= n_multi / n <= 0.78, "multi-offer share %.2f" % (n_multi / n))
    need(0.22 <= n_unclaimed / n <= 0.38, "unclaimed share %.2f" % (n_unclaimed / n))
    need(n_null_ot >= 5, "null on_time_rate_90d %d" % n_null_ot)
    for v in devices:
        need(len(fits_by_dev.get(v["slug"], [])) >= 3, "device %s has < 3 fitting products" % v["slug"])
    need(sum(1 for s in nofit_by_dev if nofit_by_dev[s]) >= 10, "need 10 devices with does_not_fit")
    mixed = [k for k, st in groups.items() if st == {"pending", "verified", "contradicted"}]
    need(len(mixed) >= 5, "need >= 5 (device, part type) groups mixing all states, got %s" % mixed)
    for p in products:
        p.pop("_state", None)
    return dict(categories=by_cat, part_types=by_pt, states=states, out_of_stock=n_oos, low_stock_offers=n_low_stock,
                single_offer=n_single, multi_offer=n_multi, unclaimed=n_unclaimed, null_on_time=n_null_ot,
                devices_with_nofit=len(nofit_by_dev), mixed_groups=len(mixed))


PRICE_RANGE = {  # cents, per (category, part type)
    ("hand-soap", "hand-soap"): (149, 999),
    ("air-filters", "filter"): (1200, 8000),
    ("vacuum-parts", "filter"): (800, 4500),
    ("vacuum-parts", "dust-bag"): (700, 2500),
    ("vacuum-parts", "battery"): (3500, 16000),
    ("vacuum-parts", "accessory-kit"): (1500, 7000),
    ("coffee-kitchen", "descaler"): (500, 2500),
    ("coffee-kitchen", "jug-filter"): (600, 4500),
    ("coffee-kitchen", "filter"): (900, 3000),
    ("printer-ink", "toner"): (4000, 16000),
    ("printer-ink", "ink-cartridge"): (1000, 7000),
    ("chargers-cables", "charger"): (1500, 8000),
    ("chargers-cables", "cable"): (700, 4000),
    ("batteries", "battery"): (3000, 20000),
    ("batteries", "cell"): (300, 2500),
}


# Contradicted products get invented brand names: the demo must not say that a
# real company's product failed a measurement it never had.
FICTIONAL_BRANDS = [
    "Zelvano", "Marwick Labs", "Hemmingby", "Cloverdeen", "Velturo", "Fennick", "Solvary",
    "Ruvella", "Mossgrove", "Quorvin", "Dunmere", "Elkmoor", "Varnel", "Halvard", "Orlenko",
    "Brasko", "Kandor", "Tressel", "Ambervale", "Nordquist", "Pellworth", "Ostrik", "Lumbra",
    "Gravik", "Selmond",
]


def fictional_brands_for_contradicted(products):
    contra = [p for p in products if p["verification"] is not None
              and any(contradicts(r, r.get("measured")) for r in p["specs"])]
    contra.sort(key=lambda p: p["sku"])
    assert len(contra) <= len(FICTIONAL_BRANDS), "add fictional brands"
    used = {p["brand"] for p in products}
    assert not used & set(FICTIONAL_BRANDS), "a fictional brand is also a catalogue brand"
    for p, brand in zip(contra, FICTIONAL_BRANDS):
        old = p["brand"]
        p["brand"] = brand
        p["name"] = p["name"].replace(old, brand)
        p["description"] = p["description"].replace(old, brand)
        assert old not in p["name"], p["sku"]


def feed(merchants, devices, products):
    """The records of the catalogue feed (docs/catalogue.md), in the order and
    form agentshopctl catalogue export writes them: merchants, devices, then
    each product followed by its offers, its measurement and its
    compatibility."""
    for m in merchants:
        yield dict(type="merchant", **m)
    for d in devices:
        yield dict(type="device", **d)
    for p in products:
        specs = []
        for s in p["specs"]:
            tol = s.get("tolerance_pct", 2.0 if s["kind"] == "performance" else 0.0)
            specs.append(dict(spec=s["spec"], label=s["label"], kind=s["kind"], unit=s["unit"],
                              claimed=s["claimed"], tolerance_pct=float(tol)))
        rec = dict(type="product", sku=p["sku"])
        if p.get("gtin"):
            rec["gtin"] = p["gtin"]
        for k in ("name", "brand", "category", "part_type", "description", "image_urls", "source"):
            rec[k] = p[k]
        rec["specs"] = specs
        rec["performance"] = p["performance"]
        rec["demo"] = True
        yield rec
        for o in p["offers"]:
            yield dict(type="offer", offer_id=o["offer_id"], sku=p["sku"], merchant=o["merchant"],
                       price_cents=(o["retail_price_cents"] * 95 + 50) // 100,
                       retail_price_cents=o["retail_price_cents"],
                       price_label="Agent-only price (demo)", delivery_days=o["delivery_days"],
                       stock=o["stock"])
        v = p.get("verification")
        if v:
            values = {s["spec"]: s["measured"] for s in p["specs"] if s.get("measured") is not None}
            yield dict(type="measurement", sku=p["sku"], lab=v["node"], measured_at=v["measured_at"],
                       sample_size=v["sample_size"], values=dict(sorted(values.items())))
        for c in p["compatibility"]:
            yield dict(type="compatibility", sku=p["sku"], device=c["device"],
                       fit_status=c["fit_status"], checked_at=c["checked_at"],
                       evidence=c["evidence"])


def main():
    merchants, devices, products = build()
    fictional_brands_for_contradicted(products)
    try:
        summary = validate(merchants, devices, products)
    except Fail as e:
        sys.stderr.write("INVARIANT VIOLATED: %s\n" % e)
        sys.exit(1)
    if "--check" not in sys.argv:
        with open(os.path.join(HERE, "catalogue.jsonl"), "w", encoding="utf-8") as f:
            for rec in feed(merchants, devices, products):
                f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    main()
