"""Renderer tests: known states drawn to images and text, checked pixel by pixel."""

import copy

import numpy as np
import pytest
from PIL import Image

from hackmatrix.render import (
    PALETTE,
    Layout,
    build_scene,
    render_rgb,
    render_text,
    save_gif,
    save_recording,
)

# Player at (2,2): row 2 and column 2 are "aligned". Every entity sits on its own cell.
BASE_STATE = {
    "player": {
        "row": 2,
        "col": 2,
        "hp": 2,
        "credits": 4,
        "energy": 3,
        "dataSiphons": 1,
        "score": 7,
    },
    "enemies": [
        {"type": "virus", "row": 0, "col": 2, "hp": 2, "stunned": True, "spawnedFromSiphon": True},
        {"type": "daemon", "row": 5, "col": 2, "hp": 3},
        {"type": "glitch", "row": 2, "col": 5, "hp": 1},
        {"type": "cryptog", "row": 2, "col": 0, "hp": 2},  # aligned: visible
        {
            "type": "cryptog",
            "row": 4,
            "col": 4,
            "hp": 1,
            "lastKnownRow": 3,
            "lastKnownCol": 4,
        },  # hidden
    ],
    "transmissions": [{"row": 3, "col": 0, "turnsRemaining": 2, "enemyType": "glitch"}],
    "blocks": [
        {"row": 1, "col": 3, "type": "data", "points": 3},
        {"row": 1, "col": 1, "type": "program", "programType": "crash", "spawnCount": 6},
        {"row": 4, "col": 1, "type": "question", "isData": False, "programActionIndex": 26},
        {"row": 0, "col": 4, "type": "data", "points": 2, "siphoned": True},
        {"row": 5, "col": 3, "type": "program", "programType": "anti-v"},
    ],
    "resources": [
        {"row": 0, "col": 5, "dataSiphon": True, "credits": 1},
        {"row": 1, "col": 2, "energy": 2},
        {"row": 5, "col": 3, "credits": 3},  # under an unsiphoned block: hidden
        {"row": 0, "col": 4, "energy": 1},  # under a siphoned block: shown
    ],
    "ownedPrograms": [18, 10, 7],
    "stage": 3,
    "turn": 4,
    "exit": {"row": 5, "col": 0},
}

LAYOUT = Layout(scale=1.0)


def pixel(image: np.ndarray, row: int, col: int, layout: Layout = LAYOUT) -> tuple:
    x, y = layout.cell_center(row, col)
    return tuple(int(v) for v in image[y, x])


@pytest.fixture(scope="module")
def image():
    return render_rgb(BASE_STATE)


def test_frame_is_rgb_uint8_and_deterministic(image):
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert image.shape[:2] == (LAYOUT.height, LAYOUT.width)
    assert np.array_equal(image, render_rgb(copy.deepcopy(BASE_STATE)))


@pytest.mark.parametrize(
    "row, col, key",
    [
        (2, 2, "player"),
        (0, 2, "virus"),
        (5, 2, "daemon"),
        (2, 5, "glitch"),
        (2, 0, "cryptog"),
        (3, 0, "transmission"),
        (1, 3, "data"),
        (1, 1, "program"),
        (4, 1, "question"),
        (0, 4, "data_siphoned"),
        (5, 0, "exit"),
        (0, 5, "data_siphon"),
        (3, 3, "floor"),
    ],
)
def test_cell_centre_has_the_entity_colour(image, row, col, key):
    assert pixel(image, row, col) == PALETTE[key]


def test_entity_colours_are_distinct():
    keys = [
        "player",
        "virus",
        "daemon",
        "glitch",
        "cryptog",
        "transmission",
        "data",
        "program",
        "question",
        "data_siphoned",
        "exit",
        "data_siphon",
        "floor",
    ]
    assert len({PALETTE[k] for k in keys}) == len(keys)


def test_row_zero_is_drawn_at_the_bottom():
    assert LAYOUT.cell_center(0, 0)[1] > LAYOUT.cell_center(5, 0)[1]
    assert LAYOUT.cell_center(0, 0)[0] < LAYOUT.cell_center(0, 5)[0]
    state = copy.deepcopy(BASE_STATE)
    state["player"].update(row=0, col=0)
    assert pixel(render_rgb(state), 0, 0) == PALETTE["player"]


def test_hidden_cryptog_is_not_drawn_but_show_reveals_it(image):
    assert pixel(image, 4, 4) == PALETTE["floor"]
    shown = copy.deepcopy(BASE_STATE)
    shown["showActivated"] = True
    assert pixel(render_rgb(shown), 4, 4) == PALETTE["cryptog"]


def test_cryptog_becomes_visible_when_aligned_with_player():
    state = copy.deepcopy(BASE_STATE)
    state["player"].update(row=4, col=3)
    assert pixel(render_rgb(state), 4, 4) == PALETTE["cryptog"]


def test_hidden_cryptog_leaves_a_hint_at_its_last_known_cell():
    scene = build_scene(BASE_STATE)
    assert scene.cell(3, 4).cryptog_hint and not scene.cell(4, 4).cryptog_hint
    assert scene.cell(4, 4).enemy is None and scene.hidden_cryptogs == 1
    # the hint is an outline only: the centre of that cell stays floor
    assert pixel(render_rgb(BASE_STATE), 3, 4) == PALETTE["floor"]


def test_visibility_rules_of_the_scene():
    scene = build_scene(BASE_STATE)
    assert scene.cell(5, 3).credits == 0  # under an unsiphoned block
    assert scene.cell(0, 4).energy == 1  # under a siphoned block
    assert scene.cell(1, 2).energy == 2  # open floor
    question = scene.cell(4, 1).block
    assert question.kind == "question" and question.program is None and question.spawn_count is None
    assert scene.cell(3, 0).transmission.enemy_type is None  # SHOW off
    revealed = build_scene(BASE_STATE, reveal=True)
    assert revealed.cell(4, 1).block.program == "atk+"
    assert revealed.cell(5, 3).credits == 3
    assert revealed.cell(4, 4).enemy is not None


def test_stunned_enemy_keeps_its_colour_at_the_centre_and_gets_a_ring(image):
    x, y = LAYOUT.cell_center(0, 2)
    ring_y = y - int(LAYOUT.cell * 0.22 * 1.1) - 2  # just outside the virus body
    assert tuple(image[ring_y, x]) == PALETTE["stun_ring"]


def test_mask_highlights_usable_programs_and_moves():
    mask = [False] * 28
    mask[0] = mask[10] = True
    with_mask = render_rgb(BASE_STATE, mask=mask)
    without = render_rgb(BASE_STATE)
    assert not np.array_equal(with_mask, without)
    assert (with_mask.reshape(-1, 3) == PALETTE["usable"]).all(axis=1).any()
    assert not (without.reshape(-1, 3) == PALETTE["usable"]).all(axis=1).any()


def test_scale_changes_the_size_and_keeps_centres():
    big = render_rgb(BASE_STATE, scale=1.5)
    layout = Layout(scale=1.5)
    assert big.shape[:2] == (layout.height, layout.width)
    assert pixel(big, 2, 2, layout) == PALETTE["player"]
    assert pixel(big, 5, 2, layout) == PALETTE["daemon"]


def test_footer_lines_add_height():
    image = render_rgb(BASE_STATE, footer=["arrows move", "S siphon"])
    assert image.shape[0] == Layout(scale=1.0, footer_lines=2).height > LAYOUT.height


def test_minimal_state_uses_schema_defaults():
    image = render_rgb({"player": {"row": 0, "col": 0}})
    assert pixel(image, 0, 0) == PALETTE["player"]
    assert pixel(image, 5, 5) == PALETTE["exit"]  # default exit (5,5)


@pytest.mark.parametrize(
    "state, message",
    [
        ({}, "state.player"),
        ({"player": {"row": 6, "col": 0}}, "state.player.row"),
        (
            {
                "player": {"row": 0, "col": 0},
                "enemies": [{"type": "dragon", "row": 1, "col": 1, "hp": 1}],
            },
            "state.enemies[0].type",
        ),
        (
            {"player": {"row": 0, "col": 0}, "blocks": [{"row": 1, "col": 1, "type": "wall"}]},
            "state.blocks[0].type",
        ),
        ({"player": {"row": 0, "col": 0, "hp": "three"}}, "state.player.hp"),
    ],
)
def test_bad_states_raise_clear_errors(state, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        render_rgb(state)


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="28"):
        render_rgb(BASE_STATE, mask=[True] * 5)
    with pytest.raises(ValueError, match="unknown keys"):
        render_rgb(BASE_STATE, reward_components={"bonus": 1.0})
    with pytest.raises(ValueError, match="scale"):
        render_rgb(BASE_STATE, scale=0)
    with pytest.raises(TypeError):
        render_rgb("not a state")


# ------------------------------------------------------------------ text


def test_text_panel_lists_the_stats_and_programs():
    text = render_text(BASE_STATE)
    for expected in (
        "HP: 2/3",
        "Credits: 4",
        "Energy: 3",
        "Siphons: 1",
        "Score: 7",
        "Stage 3",
        "Turn 4",
        "crash(7)",
        "wait(10)",
        "show(18)",
    ):
        assert expected in text
    assert "\x1b[" not in text


def test_text_grid_has_row_zero_at_the_bottom_and_shows_entities():
    lines = render_text(BASE_STATE).splitlines()
    row_lines = {int(line[0]): line for line in lines if line[:1].isdigit() and line[1:3] == "  "}
    assert list(row_lines) == [5, 4, 3, 2, 1, 0]
    assert "@" in row_lines[2] and "V2*" in row_lines[0] and "D3" in row_lines[5]
    assert "G1" in row_lines[2] and "C2" in row_lines[2] and "t2" in row_lines[3]
    assert "#3" in row_lines[1] and "crash" in row_lines[1] and "?" in row_lines[4]
    assert "EX" in row_lines[5] and "$" in row_lines[0] and "~#2" in row_lines[0]
    assert "C1" not in row_lines[4]  # the hidden cryptog
    assert "c?" in row_lines[3]  # its hint
    assert "c3" not in row_lines[5]  # credits under the unsiphoned anti-v block
    assert "atk+" not in "\n".join(row_lines.values())  # the question block's contents


def test_text_shows_transmission_type_only_with_show():
    assert "spawns in 2\n" in render_text(BASE_STATE) + "\n"
    shown = copy.deepcopy(BASE_STATE)
    shown["showActivated"] = True
    text = render_text(shown)
    assert "spawns in 2 (glitch)" in text and "SHOW active" in text


def test_text_last_step_and_reward_components():
    components = {"step_penalty": -0.01, "kills": 0.3}
    text = render_text(BASE_STATE, last_action=7, reward_components=components)
    assert "Last action: crash (7)" in text
    assert "Reward: +0.2900" in text
    assert "kills" in text and "step_penalty" in text and "victory" not in text


def test_text_mask_marks_usable_programs_and_valid_moves():
    mask = [False] * 28
    mask[1] = mask[4] = mask[10] = True
    text = render_text(BASE_STATE, mask=mask)
    assert "[wait(10)]" in text and "[crash(7)]" not in text
    assert "Valid moves: down siphon" in text


def test_text_colour_only_on_request():
    assert "\x1b[" in render_text(BASE_STATE, color=True)


def test_outcome_flags():
    dead = copy.deepcopy(BASE_STATE)
    dead["player"]["hp"] = 0
    assert "GAME OVER" in render_text(dead)
    won = copy.deepcopy(BASE_STATE)
    won.update(gameWon=True, stage=8)
    assert "GAME WON" in render_text(won)


# ------------------------------------------------------------- recordings


def test_save_gif_writes_one_frame_per_distinct_frame(tmp_path):
    frames = [render_rgb(BASE_STATE, title=f"step {i}") for i in range(3)]
    path = save_gif(frames, tmp_path / "out.gif", fps=5)
    with Image.open(path) as gif:
        assert gif.n_frames == 3
        assert gif.size == (frames[0].shape[1], frames[0].shape[0])
        assert gif.info["duration"] == 200


def test_recording_rejects_bad_input(tmp_path):
    frame = render_rgb(BASE_STATE)
    with pytest.raises(ValueError, match="no frames"):
        save_gif([], tmp_path / "a.gif")
    with pytest.raises(ValueError, match="one size"):
        save_gif([frame, frame[:-2]], tmp_path / "a.gif")
    with pytest.raises(ValueError, match="fps"):
        save_gif([frame], tmp_path / "a.gif", fps=0)
    with pytest.raises(ValueError, match=r"\.gif"):
        save_recording([frame], tmp_path / "a.txt")
    assert not (tmp_path / "a.gif").exists()


def test_video_is_written_or_refused_with_a_clear_message(tmp_path):
    frames = [render_rgb(BASE_STATE, title=f"step {i}", scale=0.5) for i in range(2)]
    try:
        path = save_recording(frames, tmp_path / "clip.mp4", fps=2)
    except RuntimeError as error:  # no ffmpeg backend installed
        assert "ffmpeg" in str(error) and ".gif" in str(error)
    else:
        import imageio.v3 as iio

        assert sum(1 for _ in iio.imiter(path)) == len(frames)
