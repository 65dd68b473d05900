"""code.py is what source.py assembles to (`python3 -m kernel_model.vdso.assemble` writes it),
and the functions sit in the image's first page, where they find the clock page from."""
from kernel_model.vdso import assemble
from kernel_model.vdso.elf_image import vdso_image


def test_code_py_is_the_assembled_source():
    assert assemble.CODE_FILE.read_text() == assemble.code_text()


def test_the_functions_end_in_the_image_s_first_page():
    for arch in ("x86_64", "i386"):
        image = vdso_image(arch)
        assert max(image.symbols.values()) < 4096
