"""`bartscore convert MODEL.gguf DIR`: a GGUF file written as a plain transformers folder (config, safetensors weights,
tokenizer, chat template), by the library's bart_score.models.conversion."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from ..models.conversion import Conversion, check_conversion


def add_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], parents: list[argparse.ArgumentParser]
) -> None:
    parser = commands.add_parser(
        "convert",
        help="a GGUF file as a plain transformers folder (config, safetensors, tokenizer, chat template)",
        description="Writes a GGUF file as the folder save_pretrained() writes: config.json, the weights dequantized "
        "to float32 in model.safetensors, the tokenizer the file's metadata describes, and its chat template (the "
        "file's, or a chat_template.jinja or tokenizer_config.json beside it). The folder scores exactly as the file. "
        "It is written beside DIR and renamed into place when complete, with bartscore-convert.json listing every "
        "file written and its SHA-256. An existing DIR is replaced only when it is empty, or holds an earlier "
        "conversion's files alone, as it wrote them; anything else in it (a file added or changed since) is refused, "
        "and nothing of it is touched.",
    )
    parser.add_argument("gguf", metavar="MODEL.gguf", help="the GGUF file")
    parser.add_argument("folder", metavar="DIR", help="the folder to write")
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bars while the file is read and converted"
    )
    parser.set_defaults(check=check, run=run)


@dataclass(frozen=True)
class ConvertRequest:
    """What `bartscore convert` asks for, checked (the file's header read, the folder's contents looked at)."""

    conversion: Conversion
    quiet: bool


def check(args: argparse.Namespace) -> ConvertRequest:
    return ConvertRequest(check_conversion(args.gguf, args.folder), args.quiet)


def run(request: ConvertRequest) -> None:
    from ..models.conversion import convert_gguf

    if request.quiet:
        import huggingface_hub
        import transformers

        transformers.utils.logging.disable_progress_bar()
        huggingface_hub.utils.disable_progress_bars()
    conversion = request.conversion
    written = convert_gguf(conversion.gguf, conversion.folder)
    print(f"converted {conversion.gguf} to {conversion.folder}: {', '.join(written)}")
